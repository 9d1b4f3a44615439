// How the clusters page words what the controller published of a cluster.
import { clockTime } from '../ui/format'

export type ClusterInfo = {
  serverVersion: string
  connectionState: { status: string; message: string; attemptedAt?: string | null }
  cacheInfo: { resourcesCount: number; apisCount: number; lastCacheSyncTime?: string | null }
  applicationsCount: number
}

/** clusterConnection words a cluster's connection state, as Argo CD does; unknown without info. */
export function clusterConnection(info: ClusterInfo | null | undefined): { state: 'ok' | 'failed' | 'unknown'; text: string } {
  if (!info) return { state: 'unknown', text: 'Unknown: no controller has reported the cluster' }
  const c = info.connectionState
  switch (c.status) {
    case 'SUCCESSFUL':
      return { state: 'ok', text: 'Successful' }
    case 'FAILED':
      return { state: 'failed', text: `Failed: ${c.message}` }
  }
  return { state: 'unknown', text: c.message ? `Unknown: ${c.message}` : 'Unknown' }
}

/** clusterFigures lists the version and cache figures of a cluster whose cache ran. */
export function clusterFigures(info: ClusterInfo | null | undefined): string[] {
  if (!info) return []
  const out: string[] = []
  if (info.serverVersion) out.push(`Kubernetes ${info.serverVersion}`)
  out.push(`${info.applicationsCount} app${info.applicationsCount === 1 ? '' : 's'}`)
  if (info.cacheInfo.lastCacheSyncTime) {
    out.push(`${info.cacheInfo.resourcesCount} resources, ${info.cacheInfo.apisCount} APIs cached`)
    out.push(`synced ${clockTime(info.cacheInfo.lastCacheSyncTime)}`)
  }
  return out
}
