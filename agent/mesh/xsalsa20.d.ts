/** The types of `xsalsa20` (1.2.0, pnet's cipher), which ships none. */
declare module 'xsalsa20' {
  interface XSalsa20 {
    update: (input: Uint8Array, output?: Uint8Array) => Uint8Array
    finalize: () => void
  }
  function xsalsa20 (nonce: Uint8Array, key: Uint8Array): XSalsa20
  export default xsalsa20
}
