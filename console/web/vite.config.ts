import react from '@vitejs/plugin-react'
import { defineConfig } from 'vitest/config'

// The dev server proxies the API and the login endpoints to a graphcd
// server on 127.0.0.1:8080 (GRAPHCD_URL overrides it), so the session
// cookie is same-origin exactly as in production.
const target = process.env.GRAPHCD_URL ?? 'http://127.0.0.1:8080'

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '/api': { target, ws: true },
      '/auth': { target },
    },
  },
  build: {
    outDir: 'dist',
    // Hashed file names under assets/ are what console.go caches forever.
    assetsDir: 'assets',
    sourcemap: false,
  },
  test: {
    include: ['src/**/*.test.ts'],
  },
})
