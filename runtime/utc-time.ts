/**
 * Epoch milliseconds as an RFC 3339 UTC time (`2026-11-27T01:02:03Z`), for messages a
 * user reads (no raw epochs in logs or refusals). Pure arithmetic, as runtime/ may not
 * use Date: Howard Hinnant's days-to-civil algorithm, exact for the proleptic Gregorian
 * calendar.
 */
export function utcTimestamp (ms: number): string {
  const days = Math.floor(ms / 86_400_000)
  const secondsOfDay = Math.floor((ms - days * 86_400_000) / 1000)
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  const two = (n: number): string => String(n).padStart(2, '0')
  const hms = [Math.floor(secondsOfDay / 3600), Math.floor(secondsOfDay / 60) % 60, secondsOfDay % 60].map(two).join(':')
  return `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${hms}Z`
}
