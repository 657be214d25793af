-- Every reservation keeps the prices it was granted at (reserve_batch writes them now, budgeted or
-- not). One still held gets the endpoint's prices now, the best record there is and what its
-- settle would have used before; resolved ones keep what their settle wrote.
UPDATE reservations r SET prices = ceilings.part_prices(e.parts)
FROM endpoints e WHERE e.id = r.endpoint_id AND r.prices IS NULL AND r.state = 'held';
