/**
 * The one table that turns an SSH `exit-signal` name into a signal number.
 *
 * RFC 4254 §6.10 sends signals by name without the `SIG` prefix (`TERM`, `KILL`); `ssh2` adds the
 * prefix. The numbers are Linux's (x86, ARM, RISC-V), which is what the remote hosts this provider
 * inspects run; the RFC's own names are all here. A name outside the table (an OS-specific
 * signal) is not guessed: the exit becomes `unknown/cause_unreported`.
 */
export const SSH_SIGNAL_NUMBERS: Readonly<Record<string, number>> = Object.freeze({
  HUP: 1,
  INT: 2,
  QUIT: 3,
  ILL: 4,
  TRAP: 5,
  ABRT: 6,
  BUS: 7,
  FPE: 8,
  KILL: 9,
  USR1: 10,
  SEGV: 11,
  USR2: 12,
  PIPE: 13,
  ALRM: 14,
  TERM: 15,
  CHLD: 17,
  CONT: 18,
  STOP: 19,
  TSTP: 20,
  TTIN: 21,
  TTOU: 22,
  URG: 23,
  XCPU: 24,
  XFSZ: 25,
  VTALRM: 26,
  PROF: 27,
  WINCH: 28,
  IO: 29,
  PWR: 30,
  SYS: 31,
})

/**
 * The number of a signal name as SSH or `ssh2` spells it (`TERM`, `SIGTERM`); `null` for a name
 * outside {@link SSH_SIGNAL_NUMBERS}.
 */
export function sshSignalNumber(name: string): number | null {
  const bare = name.startsWith('SIG') ? name.slice(3) : name
  return Object.prototype.hasOwnProperty.call(SSH_SIGNAL_NUMBERS, bare) ? (SSH_SIGNAL_NUMBERS[bare] ?? null) : null
}
