// Node 20 lacks Promise.withResolvers (V8 12.x has it from Node 22); libp2p 2.x calls it at
// runtime through it-queue. Every entry point imports this module first.
declare global {
  interface PromiseConstructor {
    withResolvers<T>(): { promise: Promise<T>, resolve: (value: T | PromiseLike<T>) => void, reject: (reason?: unknown) => void }
  }
}
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers<T> () {
    let resolve!: (value: T | PromiseLike<T>) => void
    let reject!: (reason?: unknown) => void
    const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}
export {}
