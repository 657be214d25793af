// The door to the endpoint catalog: what the dashboard, the CLI, the demo seed and tests call.
export { addCeiling, createEndpoint, removeCeiling, setAlertThresholds, setEndpointArchived, updateEndpoint } from "./change";
export { CatalogConflictError, CatalogError, type CatalogErrorCode } from "@/lib/limits/errors";
export {
  applyCatalog,
  CATALOG_SCHEMA_FILE,
  CATALOG_SCHEMA_REF,
  catalogJsonSchema,
  exportCatalog,
  parseCatalogText,
  planCatalog,
  type ApplyResult,
  type EndpointPlan,
  type Plan,
} from "./file";
export { listEndpointKeys, readCatalog, readCatalogEndpoint, type CatalogEndpoint } from "./read";
export * from "./spec";
export { ceilingSentence, describeWorstCase, proposedCeilings, worstCases, type WorstCases } from "./worst-case";
