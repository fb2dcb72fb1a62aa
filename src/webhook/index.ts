/** The webhook receiver: public surface. See docs/WEBHOOKS.md. */
export { createWebhookReceiver, type WebhookReceiver, type WebhookReceiverOptions, type WebhookReceiverDeps } from './receiver.js';
export { createWebhookHandler, type WebhookHandler, type WebhookHooks, type WebhookHookContext } from './handler.js';
export { flushWebhookEvents, writeWebhookBatch, batchBaseName, type BatchFiles, type WebhookOutboxLine, type SourceLink } from './flush.js';
export { csvColumnsFor, flattenEvent, CSV_COMMON_COLUMNS } from './flatten.js';
export { WEBHOOK_KINDS, DEFAULT_KIND_ALIASES, resolveKind, resolveKindName, normalizeKindName, type WebhookKind, type KindSource } from './kinds.js';
export { extractEventId, computeDedupKey, extractLinkId } from './event.js';
export { verifySecret } from './secret.js';
