// Light or dark: the system's choice (prefers-color-scheme) unless the
// user picked one in the topbar, remembered in localStorage. The chosen
// palette is set as data-theme on <html>, which theme.css maps to colours.
import { useEffect, useState } from 'react'
import './theme.css'

export type ThemeChoice = 'system' | 'light' | 'dark'
export type Theme = 'light' | 'dark'

export const THEME_CHOICES: readonly ThemeChoice[] = ['system', 'light', 'dark']
const KEY = 'graphcd.theme'
const DARK = '(prefers-color-scheme: dark)'

/** parseChoice reads a stored choice; anything unknown means system. */
export function parseChoice(stored: string | null | undefined): ThemeChoice {
  return stored === 'light' || stored === 'dark' ? stored : 'system'
}

/** resolveTheme is the palette a choice gives when the system prefers dark or not. */
export function resolveTheme(choice: ThemeChoice, systemDark: boolean): Theme {
  return choice === 'system' ? (systemDark ? 'dark' : 'light') : choice
}

function storedChoice(): ThemeChoice {
  try {
    return parseChoice(window.localStorage.getItem(KEY))
  } catch {
    return 'system' // storage disabled: follow the system
  }
}

function systemDark(): boolean {
  return window.matchMedia?.(DARK).matches ?? false
}

function apply(choice: ThemeChoice) {
  document.documentElement.dataset.theme = resolveTheme(choice, systemDark())
}

// Before the first render, so the page never flashes the other palette.
if (typeof document !== 'undefined') apply(storedChoice())

/** useTheme is the user's choice and how to change it; the page follows the system while it is "system". */
export function useTheme(): [ThemeChoice, (c: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(storedChoice)
  useEffect(() => {
    apply(choice)
    if (choice !== 'system') return
    const mq = window.matchMedia?.(DARK)
    const follow = () => apply('system')
    mq?.addEventListener('change', follow)
    return () => mq?.removeEventListener('change', follow)
  }, [choice])
  const choose = (c: ThemeChoice) => {
    try {
      if (c === 'system') window.localStorage.removeItem(KEY)
      else window.localStorage.setItem(KEY, c)
    } catch {
      // storage disabled: the choice lasts for this page only
    }
    setChoice(c)
  }
  return [choice, choose]
}
