import { describe, expect, it } from 'vitest'
import { planLayout, type Box, type Link } from './pack'

const box = (id: string): Box => ({ id, width: 100, height: 40 })

function star(n: number): { boxes: Box[]; links: Link[] } {
  const boxes = [box('app')]
  const links: Link[] = []
  for (let i = 0; i < n; i++) {
    boxes.push(box(`c${i}`))
    links.push({ id: `app->c${i}`, source: 'app', target: `c${i}` })
  }
  return { boxes, links }
}

describe('planLayout', () => {
  it('leaves few children alone', () => {
    const { boxes, links } = star(3)
    const p = planLayout(boxes, links, 12)
    expect(p.boxes).toEqual(boxes)
    expect(p.links).toEqual(links)
    expect(p.packed.size).toBe(0)
  })

  it('packs many leaves into one box and places them in a grid inside it', () => {
    const { boxes, links } = star(30)
    const p = planLayout(boxes, links, 12)
    expect(p.boxes.map((b) => b.id)).toEqual(['app', 'pack:app'])
    expect(p.links).toEqual([{ id: 'app->pack:app', source: 'app', target: 'pack:app' }])
    expect(p.packed.size).toBe(30)
    const pack = p.boxes[1]!
    const placed = p.place(
      new Map([
        ['app', { x: 0, y: 0 }],
        ['pack:app', { x: 500, y: 100 }],
      ]),
    )
    expect(placed.size).toBe(31)
    expect(placed.get('c0')).toEqual({ x: 500, y: 100 })
    // Every leaf lies inside the box ELK reserved, none on top of another.
    const seen = new Set<string>()
    for (let i = 0; i < 30; i++) {
      const at = placed.get(`c${i}`)!
      expect(at.x + 100).toBeLessThanOrEqual(500 + pack.width)
      expect(at.y + 40).toBeLessThanOrEqual(100 + pack.height)
      seen.add(`${at.x},${at.y}`)
    }
    expect(seen.size).toBe(30)
    expect(p.place(new Map()).size).toBe(0)
  })

  it('does not pack objects with children or two parents', () => {
    const { boxes, links } = star(12)
    const withChild = [...links, { id: 'c0->g', source: 'c0', target: 'g' }]
    const twoParents = [...links, { id: 'c1->c2', source: 'c1', target: 'c2' }]
    expect(planLayout([...boxes, box('g')], withChild, 12).packed.size).toBe(0) // 11 leaves left: under the minimum
    const p = planLayout(boxes, twoParents, 10)
    expect(p.packed.has('c1')).toBe(false) // has a child
    expect(p.packed.has('c0')).toBe(true)
    expect(p.packed.has('c2')).toBe(false) // two parents
    expect(p.packed.has('c3')).toBe(true)
  })
})
