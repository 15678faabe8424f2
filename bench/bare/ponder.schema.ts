import { onchainTable } from "ponder";

export const nothing = onchainTable("nothing", (t) => ({ id: t.text().primaryKey() }));
