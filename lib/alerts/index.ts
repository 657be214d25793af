// The door to alerts: rules, the reconcile job, the digest, delivery, the inbox and destinations.
export { acknowledgeAlerts } from "./acknowledge";
export { deliverDueAlerts, type DeliveryRunResult, type DeliverySettings } from "./delivery";
export { createDestination, deleteDestination, DestinationInput, listDestinations, setDestinationEnabled, type DestinationView } from "./destinations";
export { fireQuotaDigest, readQuotaDigest, type Digest } from "./digest";
export { AlertError } from "./errors";
export { fireAlert, type FireAlertParams } from "./fire";
export { raiseSilentWorkers, readWorkerHealth, writeHeartbeat, type WorkerHealth, type WorkerLiveness } from "./heartbeat";
export { readAlertBadge, type AlertBadge } from "./badge";
export { countUnacknowledged, InboxFilters, listInbox, type DeliveryView, type InboxAlert, type InboxPage } from "./inbox";
export { alertKindLabels, alertKinds, alertLinks, isAlertKind, type AlertKind, type AlertLinks } from "./kinds";
export { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, retryDelayMs, signPayload, verifySignature } from "./payload";
export { findDrift, reconcileCounters, type Drift } from "./reconcile";
export { runAlertRules, type RuleSettings } from "./rules";
