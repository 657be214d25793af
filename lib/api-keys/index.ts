// The door to API keys: the dashboard manages them, the HTTP API authenticates with them.
export { allowsEndpoint, authenticateApiKey, type ApiPrincipal, type Authentication, type AuthenticationFailure } from "./authenticate";
export { API_KEYS_CHANNEL, ApiKeyCache, type ApiKeyCacheOptions } from "./cache";
export { createApiKey, type CreatedApiKey } from "./create";
export { ApiKeyError, type ApiKeyErrorCode } from "./errors";
export { ApiKeyAccount, ApiKeyBinding, CreateApiKeyInput } from "./input";
export { listApiKeys, listEndpointChoices, type ApiKeySummary, type EndpointChoice } from "./list";
export { revokeApiKey } from "./revoke";
export { ACCOUNT_SCOPES, API_KEY_SCOPES, ApiKeyScope, ApiKeyScopes, hasScope, SCOPE_MEANINGS } from "./scopes";
export { generateToken, hashToken, readBearer, tokenPrefix } from "./token";
