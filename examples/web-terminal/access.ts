// Who may open a WebSocket to the web terminal. A shell must never be reachable by another user of
// the machine or by another site open in the user's browser, so every upgrade must:
//
//   1. name this server in `Host` (a DNS-rebinding page reaches 127.0.0.1 under a foreign host name);
//   2. come from this server's page: `Origin` is exactly `http://127.0.0.1:<port>` (browsers always
//      send it on a WebSocket; a foreign site cannot forge it);
//   3. present the random token printed at start (another local user can connect to the port, but
//      cannot read this process's output).
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** Bytes of randomness in a generated token (256 bits). */
export const TOKEN_BYTES = 32

/** A fresh random token, URL-safe. */
export function createAccessToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url')
}

/** Why an upgrade was refused, as an HTTP status and a reason (the reason is logged, never sent). */
export type AccessRefusal = { status: 400 | 401 | 403 | 404; reason: string }

/**
 * The request's target as a URL against `origin`, or `undefined` when it is not one. Why never
 * throw: any client, token or not, chooses the target, and an absolute-form target with a bad host
 * (`GET http://[/ HTTP/1.1`) makes `new URL` throw — thrown from a request or upgrade handler, it
 * would take the whole server down, with every terminal.
 */
export function parseRequestTarget(request: IncomingMessage, origin: string): URL | undefined {
  try {
    return new URL(request.url ?? '/', origin)
  } catch {
    return undefined
  }
}

/**
 * Check one WebSocket upgrade request against the server's origin (`http://127.0.0.1:<port>`),
 * path and token. Answers `undefined` when the request may proceed; never throws.
 */
export function checkUpgradeAccess(
  request: IncomingMessage,
  expected: { origin: string; path: string; token: string },
): AccessRefusal | undefined {
  const url = parseRequestTarget(request, expected.origin)
  if (url === undefined) return { status: 400, reason: 'the request target is not a URL' }
  if (url.pathname !== expected.path) return { status: 404, reason: `no WebSocket at ${url.pathname}` }
  if (`http://${request.headers.host ?? ''}` !== expected.origin) {
    return { status: 403, reason: `Host ${JSON.stringify(request.headers.host)} is not this server` }
  }
  if (request.headers.origin !== expected.origin) {
    return { status: 403, reason: `Origin ${JSON.stringify(request.headers.origin)} is not this server's page` }
  }
  if (!tokensEqual(url.searchParams.get('token') ?? '', expected.token)) {
    return { status: 401, reason: 'missing or wrong token' }
  }
  return undefined
}

/** Constant-time comparison, so the token cannot be guessed a character at a time from timings. */
function tokensEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
