-- The contract exact for any client (issue 39), reconciliation of every billed dollar (issue 36)
-- and the dashboard at production size (issue 35). One section each; a section holds schema only
-- (functions come from db/functions/ through the functions migration after it).
--> statement-breakpoint
-- section: contract (issue 39)
SELECT 1;
--> statement-breakpoint
-- section: reconciliation (issue 36)
SELECT 1;
--> statement-breakpoint
-- section: scale (issue 35)
SELECT 1;
