/** One question on the terminal (stderr, so stdout stays the command's output), for commands that confirm before destroying. */
export async function ask (question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises')
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return await rl.question(question)
  } finally {
    rl.close()
  }
}
