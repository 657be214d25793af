// The demo: the data a first start is seeded with, and a demo service that is a real consumer of
// the enforcement library, used by `npm run demo:traffic`.
export { createFakeProvider, demoProvider, type EmailMessage, type EmailProvider, type FakeProvider, type SendResult } from "./fake-provider";
export { prepareDatabaseWithDemo } from "./first-start";
export { DEMO_BCRYPT_COST, seedDemoIfEmpty, type SeedOptions, type SeedSummary } from "./seed";
export { handleSubscribe, logToConsole, UNIFORM_BODY, type SubscribeHandlerDeps, type SubscribeLogEntry } from "./subscribe-handler";
export { parseSubscribeBody, subscribe, SUBSCRIBE_ENDPOINT, SubscribeInputError, type DeliveryOutcome, type SubscribeOutcome } from "./subscribe";
