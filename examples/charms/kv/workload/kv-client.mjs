#!/usr/bin/env node
// kv-client: what the kv charm's hooks and actions use to talk to kv-server.
//
//   node kv-client.mjs <base-url> health
//   node kv-client.mjs <base-url> get <key>
//   node kv-client.mjs <base-url> put <key> <value>     (token from $KV_TOKEN)
//
// Prints the response body. Exit 0 on success, 3 when the key does not exist,
// 1 on any other failure (message on stderr). Every request gives up after
// $KV_TIMEOUT_MS milliseconds (default 3000).
const [base, command, key, value] = process.argv.slice(2)
const timeoutMs = Number(process.env.KV_TIMEOUT_MS) || 3000

function usage () {
  console.error('usage: kv-client.mjs <base-url> health | get <key> | put <key> <value>')
  process.exit(2)
}

async function main () {
  if (base === undefined) usage()
  let url
  let init = { signal: AbortSignal.timeout(timeoutMs) }
  if (command === 'health') {
    url = `${base}/health`
  } else if (command === 'get' && key) {
    url = `${base}/kv/${encodeURIComponent(key)}`
  } else if (command === 'put' && key && value !== undefined) {
    url = `${base}/kv/${encodeURIComponent(key)}`
    init = { ...init, method: 'PUT', body: value, headers: { 'x-token': process.env.KV_TOKEN ?? '' } }
  } else {
    usage()
  }
  const res = await fetch(url, init)
  const body = await res.text()
  if (res.ok) {
    process.stdout.write(body)
    return 0
  }
  process.stderr.write(`${res.status} ${body}`)
  return res.status === 404 ? 3 : 1
}

main().then(code => process.exit(code), error => {
  console.error(`kv-client: ${error.cause?.message ?? error.message}`)
  process.exit(1)
})
