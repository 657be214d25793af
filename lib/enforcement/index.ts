export { callReserveBatch, type BatchRequest } from "./batcher";
export { batcherFor, reserve } from "./reserve";
export { expireReservations, releaseReservation, settleReservation } from "./resolve";
export * from "./types";
export { unavailableCounts, type UnavailableReason } from "./unavailable";
export { withReservation, type WithReservationResult, type Work } from "./with-reservation";
export { type BatchCost, CostInputError, type CostOptions, costOfBatch } from "./cost";
export { enforcementObserver, setEnforcementObserver, type EnforcementObserver } from "./observer";
