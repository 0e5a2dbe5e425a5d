import { createServer } from 'node:net'

/** A TCP port free on 127.0.0.1 right now (the OS picks it; someone may take it before it is used). */
export async function freeLoopbackPort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    })
  })
}
