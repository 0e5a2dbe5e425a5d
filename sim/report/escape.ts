/** Text and attribute values for HTML and SVG: every markup character escaped. */
export function escapeXml (text: string): string {
  return text.replace(/[&<>"']/g, c => escapes[c]!)
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }

/** Milliseconds as simulated seconds for labels: `12.345 s`. */
export function seconds (ms: number): string {
  return `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')} s`
}
