-- Every endpoint keeps its price as its one part, `units`, now in picos (millionths of a micro).
UPDATE "endpoints" SET "parts" = jsonb_build_array(jsonb_build_object('name', 'units', 'pricePico', "unit_price_micros" * 1000000));--> statement-breakpoint
ALTER TABLE "endpoints" DROP COLUMN "unit_price_micros";
