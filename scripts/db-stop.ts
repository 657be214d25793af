import { stopEmbeddedServer } from "@/db/embedded/server";
import { env } from "@/lib/env";

// npm run db:stop: stops the embedded server in DATA_DIR (fast shutdown: open sessions end,
// everything committed is kept). For a server left up by db:url or by an interrupted process.

const dataDir = env().DATA_DIR;
stopEmbeddedServer(dataDir).then(
  (stopped) => {
    console.log(stopped ? `db:stop: stopped the embedded database in ${dataDir}` : `db:stop: no embedded database is running in ${dataDir}`);
    process.exit(0);
  },
  (error: unknown) => {
    console.error(`db:stop failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
