// Prometheus metrics (prom-client): the registry fed by the enforcement observer, gauges read from
// the database at scrape time, and who may read them.
export { checkMetricsAccess, type Access } from "./access";
export { refreshDatabaseGauges } from "./collect";
export { metrics, observerFor, type Metrics } from "./registry";
export { startMetricsServer, type MetricsServer } from "./server";
