import * as assert from 'uvu/assert'

/** Await `promise`, require it to reject with an Error named `name`, and return that error (uvu has no `rejects`). */
export async function rejects (promise: Promise<unknown>, name: string): Promise<Error> {
  try {
    await promise
  } catch (error) {
    assert.instance(error, Error)
    assert.is((error as Error).name, name, (error as Error).message)
    return error as Error
  }
  assert.unreachable(`expected a ${name}`)
  throw new Error('unreachable')
}
