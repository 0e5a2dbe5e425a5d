/** Named maxima of the inspect viewer's server side (the browser's are beside its code). */
export const viewerLimits = {
  /** Raw messages the server keeps to replay to a browser that connects (the oldest go first). */
  historyMax: 500_000,
  /** Messages sent to a browser in one WebSocket frame (history is chunked, live is batched). */
  frameMessagesMax: 5_000,
  /** Live messages are batched for this long before they go to the browsers. */
  flushIntervalMs: 50,
  /** A browser further behind than this (bytes queued) is disconnected; it reconnects and starts over. */
  browserBufferedBytesMax: 64 * 1024 * 1024,
  /** Reconnect back-off to an agent: first delay and cap. */
  reconnectDelayMsMin: 250,
  reconnectDelayMsMax: 5_000,
  /** Largest recorded log file read whole. */
  logFileBytesMax: 512 * 1024 * 1024
} as const
