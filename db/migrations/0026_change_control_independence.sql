-- Change control without a way around it: everything that loosens spend is a raise, an approver is
-- independent of the requester, the CLI proves who it is, API keys carry scopes, every stop alerts.
--> statement-breakpoint
-- section: independence and staff tokens
--> statement-breakpoint
-- section: plans and accounts
--> statement-breakpoint
-- A plan an API key may move accounts to even when that loosens them (billing upgrades): off for
-- every plan; turning it on is a raise asked of two admins (lib/changes/plan-kinds.ts).
ALTER TABLE "plans" ADD COLUMN "key_assignable" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- section: budgets, prices and raise ends
--> statement-breakpoint
-- section: api key scopes
--> statement-breakpoint
-- section: stops
SELECT 1;
