/**
 * The escape sequences `resetInputModes` hands to the consumer's view: they put a terminal left
 * in a crashed full-screen program's modes back to the defaults. Written to the **view** (the
 * terminal emulator), never to the process: these are modes of the terminal, not of the program.
 *
 * Order matters: kitty keyboard flags are kept per screen, so they are reset on the alternate
 * screen (if it is active), then the alternate screen is left, then they are reset on the main one.
 */
export const INPUT_MODE_RESET_SEQUENCE: string = [
  // Kitty keyboard protocol: pop every pushed entry, then set the flags to 0 (`CSI = 0 ; 1 u`).
  '\x1b[<99u',
  '\x1b[=0;1u',
  // Leave the alternate screen. Why 1047/47 and not 1049: `?1049l` also restores the saved cursor,
  // which would move the cursor of a terminal that was never on the alternate screen.
  '\x1b[?1047l',
  '\x1b[?47l',
  '\x1b[<99u',
  '\x1b[=0;1u',
  // Bracketed paste off.
  '\x1b[?2004l',
  // Mouse reporting off (X10, normal, button-event, any-event) and its encodings (UTF-8, SGR, urxvt).
  '\x1b[?9l',
  '\x1b[?1000l',
  '\x1b[?1002l',
  '\x1b[?1003l',
  '\x1b[?1005l',
  '\x1b[?1006l',
  '\x1b[?1015l',
  // Focus reporting off.
  '\x1b[?1004l',
  // Normal cursor keys (DECCKM off) and the numeric keypad (DECKPNM).
  '\x1b[?1l',
  '\x1b>',
  // Show the cursor again.
  '\x1b[?25h',
].join('')
