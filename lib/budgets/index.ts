// The door to budgets: what the dashboard, the CLI and tests call.
export * from "./dashboard";
