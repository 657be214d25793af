-- Guarantees: writes the reservations of the requests `which` names (indexes into the per-request
-- arrays, as reserve_batch keeps them), held, and answers the ids written. A request whose
-- idempotency key another reservation of its endpoint and caller already has is not written (its
-- id is missing from the answer): the caller answers it from the stored one. Every reservation
-- keeps the prices it was granted at, budgeted or not: settle, reconciliation and the what-if
-- price it with them, whatever the catalog says later. Its charges are the batch's, in charge
-- order (charges), from its first to its last (first_charge, last_charge).
-- Lock order: reservations idempotency index entries, by (endpoint id, caller, key) (step 7 of
-- decide_batch). reserve_batch_arrays writes the common batch's rows (no key, destination or
-- parts) with an insert of its own, the plain one below with fewer columns.
-- No SET clause: it runs inside decide_batch, whose search_path and generic plans hold for
-- it too, and it names its one table by schema, so no search_path changes what it writes. A
-- function with SET saves and restores each setting on every call: 15,600 instructions a batch
-- (a lone call too), measured 2026-12-07.
CREATE OR REPLACE FUNCTION ceilings.write_reservations(
  which int[], ids uuid[], endpoint_ids int[], callers text[], destinations text[], destination_keys text[], amounts bigint[],
  parts jsonb[], money bigint[], prices jsonb, idempotency_keys text[], charges reservation_charge[], first_charge int[], last_charge int[],
  created timestamptz, expires timestamptz[])
RETURNS uuid[] LANGUAGE plpgsql AS $$
DECLARE
  written uuid[];
BEGIN
  -- A batch without idempotency keys can conflict on nothing, and its rows take no unique entry
  -- but their random ids, so in no order: a plain insert, not a speculative one (ON CONFLICT
  -- writes and confirms each row apart). The two statements differ only in that clause and the
  -- order; SQL cannot make the clause conditional, and one statement for both cost 369,000 more
  -- instructions a batch of 32 without keys (48,000 a lone call), measured 2026-12-06.
  -- (No keys: a list of NULLs and '' only, or no list at all.)
  IF coalesce(array_to_string(idempotency_keys, ''), '') = '' THEN
    WITH ins AS (
      INSERT INTO public.reservations (id, endpoint_id, caller, destination, destination_key, amount, parts, money, prices,
                                idempotency_key, charges, created_at, expires_at)
      SELECT ids[q], endpoint_ids[q], callers[q], destinations[q], destination_keys[q], amounts[q], parts[q], money[q],
             prices -> endpoint_ids[q]::text, idempotency_keys[q], charges[first_charge[q]:last_charge[q]], created, expires[q]
      FROM unnest(which) AS q
      RETURNING id
    )
    SELECT coalesce(array_agg(id), '{}') INTO written FROM ins;
    RETURN written;
  END IF;
  WITH ins AS (
    INSERT INTO public.reservations (id, endpoint_id, caller, destination, destination_key, amount, parts, money, prices,
                              idempotency_key, charges, created_at, expires_at)
    SELECT ids[q], endpoint_ids[q], callers[q], destinations[q], destination_keys[q], amounts[q], parts[q], money[q],
           prices -> endpoint_ids[q]::text, idempotency_keys[q], charges[first_charge[q]:last_charge[q]], created, expires[q]
    FROM unnest(which) AS q
    ORDER BY endpoint_ids[q], callers[q], idempotency_keys[q]
    ON CONFLICT (endpoint_id, caller, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id
  )
  SELECT coalesce(array_agg(id), '{}') INTO written FROM ins;
  RETURN written;
END $$;
