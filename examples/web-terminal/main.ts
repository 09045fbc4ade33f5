// Start the web terminal and print its URL:
//
//   npm run example:web        (node --import tsx examples/web-terminal/main.ts)
//
// Run it under `node --import tsx`, not the `tsx` command: tsx's wrapper process relays Ctrl-C and
// kills this process moments later, before a server busy with output has stopped its terminals.
//
// Open the printed URL in a browser on this machine. The URL carries a random token: anyone who has
// it has a shell as you, so do not share it. Ctrl-C stops every terminal and the server.
import { startWebTerminalServer } from './server.js'

const port = Number(process.env['PORT'] ?? 0)
const server = await startWebTerminalServer({ port })
console.log(`ptykit web terminal: ${server.url}`)

let stopping = false
const stop = (): void => {
  if (stopping) return
  stopping = true
  console.log('\nstopping every terminal…')
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    },
  )
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
