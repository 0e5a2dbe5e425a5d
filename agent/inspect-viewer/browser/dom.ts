/// <reference lib="dom" />
/** Small DOM helpers for the viewer's front end. */

export function byId<T extends HTMLElement = HTMLElement> (id: string): T {
  const element = document.getElementById(id)
  if (element === null) throw new Error(`cantrip inspect: expected an element #${id} in the page, got none`)
  return element as T
}

/** Escapes text for HTML and SVG markup built as strings. */
export function esc (text: string): string {
  return text.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

export function timeText (at: number): string {
  // Simulated runs count ms from 0; live ones are epoch ms.
  if (at < 1e11) return `${(at / 1000).toFixed(3)} s`
  const d = new Date(at)
  return `${d.toLocaleTimeString('en-GB', { hour12: false })}.${String(d.getMilliseconds()).padStart(3, '0')}`
}
