// Generates the bot's protocol code from the wire contract; run by `npm install` / `npm ci`
// (the package's "postinstall" script), and by hand after editing the .proto file:
//
//     node generate.js
//
// protobufjs-cli's `pbjs` (pure JavaScript, no protoc download) turns
// ../../proto/tichu/arena/v1/arena.proto into generated/arena.js: one static ES module with
// an encode/decode class per message (tichu.arena.v1.Hello, ...) and a frozen object per
// enum. Field names keep the .proto spelling (`--keep-case`: request_id, exchange_cards),
// so the code reads like docs/protocol.md. The service itself is not generated
// (`--no-service`): bot.js calls it through @grpc/grpc-js with the generated
// encode/decode functions.

import { mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

import cli from "protobufjs-cli";

const here = dirname(fileURLToPath(import.meta.url));
const proto = join(here, "..", "..", "proto", "tichu", "arena", "v1", "arena.proto");
const out = join(here, "generated", "arena.js");

mkdirSync(dirname(out), { recursive: true });
const args = [
  "--target", "static-module",
  "--wrap", "esm", // `import $protobuf from "protobufjs/minimal.js"`; implies --es6
  "--keep-case",
  "--force-long", // 64-bit fields are always Long objects, never lossy JS numbers
  "--no-service",
  "--out", out,
  proto,
];
cli.pbjs.main(args, (err) => {
  if (err) {
    console.error(`generate.js: pbjs failed on ${proto}: ${err.message ?? err}`);
    process.exit(1);
  }
  const cwd = process.cwd();
  console.log(`generate.js: wrote ${relative(cwd, out)} from ${relative(cwd, proto)}`);
});
