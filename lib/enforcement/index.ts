export { callReserveBatch, type BatchRequest } from "./batcher";
export { batcherFor, reserve, type ReserveOptions } from "./reserve";
export { CONTRACT_VERSION, ContractVersionError } from "./contract";
export { DeadlineError } from "./lanes";
export { expireReservations, releaseReservation, type ResolveOptions, settleReservation } from "./resolve";
export * from "./types";
export { unavailableCounts, type UnavailableReason } from "./unavailable";
export { withReservation, type WithReservationResult, type Work } from "./with-reservation";
export { type BatchCost, CostInputError, type CostOptions, costOfBatch } from "./cost";
