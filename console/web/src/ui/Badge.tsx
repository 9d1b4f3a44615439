import type { Badge as BadgeInfo } from './badges'

export function Badge({ badge, title }: { badge: BadgeInfo; title?: string }) {
  return (
    <span className={`badge tone-${badge.tone}`} title={title || undefined} data-status={badge.label}>
      <span aria-hidden="true">{badge.symbol}</span> {badge.label}
    </span>
  )
}
