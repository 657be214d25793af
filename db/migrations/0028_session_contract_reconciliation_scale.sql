-- The contract exact for any client (issue 39), reconciliation of every billed dollar (issue 36)
-- and the dashboard at production size (issue 35). One section each; a section holds schema only
-- (functions come from db/functions/ through the functions migration after it).
--> statement-breakpoint
-- section: contract (issue 39)
-- Every reservation keeps the prices it was granted at (reserve_batch writes them now, budgeted or
-- not). One still held gets the endpoint's prices now, the best record there is and what its
-- settle would have used before; resolved ones keep what their settle wrote.
UPDATE reservations r SET prices = ceilings.part_prices(e.parts)
FROM endpoints e WHERE e.id = r.endpoint_id AND r.prices IS NULL AND r.state = 'held';
--> statement-breakpoint
-- section: reconciliation (issue 36)
SELECT 1;
--> statement-breakpoint
-- section: scale (issue 35)
SELECT 1;
