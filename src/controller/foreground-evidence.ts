import type { ProviderProcessInfo, PtyForegroundProcessEvidence, PtyProvider } from '../contracts/index.js'
import { isPtyForegroundProcessEvidence } from '../contracts/process-info.js'
import { providerGoneRefusal } from './controller-core.js'

/**
 * Whether a provider can give foreground evidence: it has `confirmForeground` and does not deny
 * support. A disposed or detached provider (which may refuse the question, `provider_disposed` /
 * `provider_detached`) gives none: a refusal for being gone is an answer, not a fault to throw.
 */
export function providerSupportsForegroundEvidence(provider: PtyProvider): boolean {
  if (provider.confirmForeground === undefined) return false
  try {
    return provider.supportsForegroundProcessEvidence?.() !== false
  } catch (error) {
    if (providerGoneRefusal(error) !== null) return false
    throw error
  }
}

/** A provider's confirmed foreground; `null` when it has no such capability, cannot confirm, or throws. */
export async function confirmForegroundOf(
  provider: PtyProvider,
  ptyId: string,
  onError: (error: unknown) => void,
): Promise<PtyForegroundProcessEvidence | null> {
  if (!providerSupportsForegroundEvidence(provider)) return null
  try {
    const evidence = await provider.confirmForeground?.(ptyId)
    return isPtyForegroundProcessEvidence(evidence) ? { foregroundProcess: evidence.foregroundProcess, shellForeground: evidence.shellForeground } : null
  } catch (error) {
    onError(error)
    return null
  }
}

/** The rows with each PTY's confirmed evidence added (`null` where the provider could not confirm). */
export async function withForegroundEvidence(
  provider: PtyProvider,
  rows: ProviderProcessInfo[],
  onError: (error: unknown) => void,
): Promise<ProviderProcessInfo[]> {
  return Promise.all(
    rows.map(async (row) => ({ ...row, foregroundProcessEvidence: await confirmForegroundOf(provider, row.id, onError) })),
  )
}
