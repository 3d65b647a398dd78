/**
 * @modelgate/retrieval: what `get_context` searches. An index per published version of its
 * entities and dimension values, offline phrase extraction, and hybrid matching (lexical,
 * semantic and value) with calibrated scores.
 */
export * as Bm25 from "./Bm25.ts"
export * as ContextIndex from "./ContextIndex.ts"
export * as EntityIndex from "./EntityIndex.ts"
export * as Evaluation from "./Evaluation.ts"
export * as Glossary from "./Glossary.ts"
export * as Guidance from "./Guidance.ts"
export * as OpenAiChat from "./OpenAiChat.ts"
export * as OpenAiEmbeddings from "./OpenAiEmbeddings.ts"
export * as OpenAiPhrases from "./OpenAiPhrases.ts"
export * as Phrases from "./Phrases.ts"
export * as Retrieval from "./Retrieval.ts"
export * as Scoring from "./Scoring.ts"
export * as Semantic from "./Semantic.ts"
export * as Tokens from "./Tokens.ts"
export * as ValueIndex from "./ValueIndex.ts"
export * as WordVectors from "./WordVectors.ts"
