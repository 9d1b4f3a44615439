import type { CodegenConfig } from '@graphql-codegen/cli'

// Typed documents for every graphql(`...`) call under src/, from the
// server's schema. Run `npm run codegen` after changing either.
const config: CodegenConfig = {
  schema: '../../schema/*.graphqls',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**/*'],
  ignoreNoDocuments: true,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { enumsAsTypes: true, useTypeImports: true, scalars: { Time: 'string' } },
    },
  },
}

export default config
