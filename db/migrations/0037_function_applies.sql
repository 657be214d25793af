CREATE TABLE "function_applies" (
	"id" serial PRIMARY KEY NOT NULL,
	"hash" text NOT NULL,
	"files" integer NOT NULL,
	"applied_at" timestamp with time zone DEFAULT now() NOT NULL
);
