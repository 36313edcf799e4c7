#!/usr/bin/env node
// node-random: a Tichu Arena bot in Node.js that plays uniformly at random among the legal
// answers. It shows that any language with gRPC can play: it uses nothing but the wire
// contract (proto/tichu/arena/v1/arena.proto, explained in docs/protocol.md), with the
// protocol code generated at `npm install` (see generate.js).
//
//   TICHU_ARENA_SERVER=host:port TICHU_ARENA_TOKEN=<seat token> node bot.js
//   node bot.js --server host:port --bot-key <key> --name my-bot     # open table
//
// Flags win over the environment. Exit status: 0 when the referee ends the stream normally
// (status OK), 1 on a non-OK gRPC status, 2 on a usage error.

import { parseArgs } from "node:util";

const PROTOCOL_VERSION = "1.0.0"; // docs/protocol.md, title and section 13
const PLAY_PATH = "/tichu.arena.v1.Referee/Play";
const MAX_RETRIES = 3; // re-answers per request after in-band errors; then the clock decides

// The dependencies and the generated code come from `npm install`: say so if they are
// missing, rather than failing with a bare module-not-found trace.
let grpc, Long, $protobuf, pb;
try {
  grpc = (await import("@grpc/grpc-js")).default;
  Long = (await import("long")).default;
  $protobuf = (await import("protobufjs/minimal.js")).default;
  pb = (await import("./generated/arena.js")).tichu.arena.v1;
} catch (err) {
  fail(2, `${err.message}\nrun \`npm install\` (or \`npm ci\`) in example_bots/node first`);
}

// protobufjs returns 64-bit fields (card masks, request ids) as Long objects when it can
// find the `long` package, and as lossy JS numbers otherwise: make sure it has it. A card
// mask uses bits up to 55, beyond the 53 bits a JS number holds exactly.
$protobuf.util.Long = Long;
$protobuf.configure();

const { DecisionKind, ErrorCode, FailureKind, FailureOutcome, Termination } = pb;

// ---------------------------------------------------------------------------- helpers

function fail(code, message) {
  console.error(`node-random: ${message}`);
  process.exit(code);
}

function log(message) {
  console.error(`[${config.name}] ${message}`);
}

/** An unsigned 64-bit field (a Long, or a plain number) as an exact BigInt. */
function toBigInt(value) {
  if (typeof value === "number") return BigInt(value);
  return (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
}

/** Card ids 0..55 in a mask, ascending (bit i set = card id i; docs/protocol.md section 4). */
function cardIds(mask) {
  const bits = toBigInt(mask);
  const ids = [];
  for (let id = 0; id < 56; id++) if ((bits >> BigInt(id)) & 1n) ids.push(id);
  return ids;
}

/** A uniformly random integer in 0..n-1. */
function randomIndex(n) {
  return Math.floor(Math.random() * n);
}

/** k distinct elements of `items`, uniformly at random (a partial Fisher-Yates shuffle). */
function sample(items, k) {
  const pool = [...items];
  for (let i = 0; i < k; i++) {
    const j = i + randomIndex(pool.length - i);
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, k);
}

/** An enum value's name without the enum's prefix: enumName(DecisionKind, 3) === "PLAY". */
function enumName(enumObject, value) {
  const keys = Object.keys(enumObject); // in .proto order: the first is <PREFIX>UNSPECIFIED
  const prefix = keys[0].replace(/UNSPECIFIED$/, "");
  const name = keys.find((key) => enumObject[key] === value);
  return name ? name.slice(prefix.length) : String(value); // unknown values: a later version
}

// ---------------------------------------------------------------------------- configuration

function readConfig() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        server: { type: "string" },
        token: { type: "string" },
        "bot-key": { type: "string" },
        name: { type: "string" },
        verbose: { type: "boolean", short: "v" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    fail(2, `${err.message} (see --help)`);
  }
  if (values.help) {
    console.log(
      "usage: node bot.js [--server host:port] [--token T | --bot-key K] [--name N] [-v]\n" +
        "defaults: TICHU_ARENA_SERVER, TICHU_ARENA_TOKEN, TICHU_ARENA_BOT_KEY, name node-random",
    );
    process.exit(0);
  }
  const env = process.env;
  const server = values.server ?? env.TICHU_ARENA_SERVER;
  const token = values.token ?? (values["bot-key"] ? undefined : env.TICHU_ARENA_TOKEN);
  const botKey = values["bot-key"] ?? (token ? undefined : env.TICHU_ARENA_BOT_KEY);
  if (!server) fail(2, "no referee address: set TICHU_ARENA_SERVER or pass --server host:port");
  if (!token && !botKey) {
    const how = "set TICHU_ARENA_TOKEN or TICHU_ARENA_BOT_KEY, or pass --token/--bot-key";
    fail(2, `no credential: ${how}`);
  }
  if (token && botKey) fail(2, "give either a seat token or a bot key, not both");
  return { server, token, botKey, name: values.name ?? "node-random", verbose: !!values.verbose };
}

const config = readConfig();

// ---------------------------------------------------------------------------- decisions

/**
 * A random legal answer to a DecisionRequest (docs/protocol.md section 6). Never calls
 * Tichu or Grand Tichu; always echoes request_id and state_seq, and for plays the cards.
 */
function answer(request) {
  const { legal, view } = request;
  const action = {
    request_id: request.request_id, // Long: echoed exactly as received
    state_seq: request.state_seq,
    choice_index: 0,
    call_tichu: false,
  };
  switch (request.kind) {
    case DecisionKind.DECISION_KIND_GRAND_TICHU:
      // values = [0, 1]: take the "no call" entry.
      action.choice_index = Math.max(0, legal.values.indexOf(0));
      break;
    case DecisionKind.DECISION_KIND_EXCHANGE: {
      // Three distinct cards of the hand, [to next seat, to partner, to previous seat].
      // legal.values lists the same ids; reading the mask shows the fixed64 handling.
      action.exchange_cards = sample(cardIds(view.hand), 3);
      break;
    }
    case DecisionKind.DECISION_KIND_PLAY:
    case DecisionKind.DECISION_KIND_BOMB_WINDOW: {
      // Play columns: entry i is (combo[i], length[i], rank[i], cards[i], ...).
      const i = randomIndex(legal.cards.length);
      action.choice_index = i;
      action.cards = legal.cards[i]; // optional echo: the referee checks it against entry i
      break;
    }
    default: {
      // WISH, DRAGON_GIFT (and any later kind): an index into whichever list is filled.
      const n = legal.cards.length || legal.values.length;
      action.choice_index = n > 0 ? randomIndex(n) : 0;
    }
  }
  if (config.verbose) {
    const what = action.exchange_cards
      ? `exchange [${action.exchange_cards}]`
      : `entry ${action.choice_index}` + (action.cards ? ` cards [${cardIds(action.cards)}]` : "");
    log(`request ${request.request_id} ${enumName(DecisionKind, request.kind)}: ${what}`);
  }
  return { action };
}

// ---------------------------------------------------------------------------- the stream

// A client for the one RPC, with the generated encoders; no service code is generated.
const RefereeClient = grpc.makeGenericClientConstructor(
  {
    Play: {
      path: PLAY_PATH,
      requestStream: true,
      responseStream: true,
      requestSerialize: (message) => Buffer.from(pb.BotMessage.encode(message).finish()),
      requestDeserialize: (bytes) => pb.BotMessage.decode(bytes),
      responseSerialize: (message) => Buffer.from(pb.RefereeMessage.encode(message).finish()),
      responseDeserialize: (bytes) => pb.RefereeMessage.decode(bytes),
    },
  },
  "tichu.arena.v1.Referee",
);

// Keepalive as recommended in docs/protocol.md section 14 (matches can sit idle).
const client = new RefereeClient(config.server, grpc.credentials.createInsecure(), {
  "grpc.keepalive_time_ms": 20000,
  "grpc.keepalive_timeout_ms": 10000,
  "grpc.keepalive_permit_without_calls": 1,
});
// No deadline: a Play call lasts whole matches; the referee runs the clock (section 8).
const call = client.Play();

let welcome = null; // the current match's Welcome
let open = null; // the last DecisionRequest, until the next one: re-answered after an Error
let retries = 0; // re-answers sent for `open`
let matches = 0;

function send(message) {
  call.write(message);
}

function onWelcome(w) {
  welcome = w;
  open = null;
  const rules = w.rules ?? {};
  const length = rules.hand_count ? `${rules.hand_count} hands` : `to ${rules.target_score}`;
  log(
    `welcome: table ${w.table_id}, seat ${w.seat}, ${length}` +
      `${rules.grand_tichu ? ", grand tichu" : ""}${w.resumed ? " (resumed)" : ""}` +
      `, referee ${w.server_version} speaking ${w.protocol_version}`,
  );
}

function onDecision(request) {
  open = request;
  retries = 0;
  send(answer(request));
}

function onError(error) {
  const code = enumName(ErrorCode, error.code);
  if (error.fatal) {
    // The referee closes the stream right after; the status handler reports it.
    log(`fatal error ${code}: ${error.message}`);
    return;
  }
  const same = open !== null && toBigInt(open.request_id) === toBigInt(error.request_id);
  const stale = error.code === ErrorCode.ERROR_CODE_UNKNOWN_REQUEST ||
    error.code === ErrorCode.ERROR_CODE_TOO_LATE;
  if (!same || stale || retries >= MAX_RETRIES) {
    log(`error ${code} on request ${error.request_id}: ${error.message} (not re-answered)`);
    return;
  }
  // The request stays open: answer it again (a fresh random choice) within ms_left.
  retries += 1;
  log(`error ${code} on request ${error.request_id}: ${error.message}; answering again`);
  send(answer(open));
}

function onEvent(event) {
  // Public events are a convenience feed: every DecisionRequest carries the full view, so a
  // random bot only looks at the end of the match.
  if (event.kind === "match_end") {
    const result = event.match_end;
    matches += 1;
    open = null;
    const scores = result.scores?.team_points ?? [];
    const won = welcome && result.winners.includes(welcome.seat);
    log(
      `match ${matches} over after ${result.hands_played} hands: ` +
        `${enumName(Termination, result.termination)}, scores [${scores.join(", ")}], ` +
        `${won ? "won" : "lost"}${result.detail ? ` (${result.detail})` : ""}`,
    );
    // The stream stays open: a table may play another match (a new Welcome), or end it.
  } else if (event.kind === "failure" && welcome && event.failure.seat === welcome.seat) {
    const f = event.failure;
    const what = `${enumName(FailureKind, f.kind)} -> ${enumName(FailureOutcome, f.outcome)}`;
    log(`failure on this seat: ${what}: ${f.detail}`);
  }
}

call.on("data", (message) => {
  switch (message.payload) {
    case "welcome":
      return onWelcome(message.welcome);
    case "waiting":
      return log(`waiting for a table (${message.waiting.bots_waiting} bots queued)`);
    case "decision":
      return onDecision(message.decision);
    case "event":
      return onEvent(message.event);
    case "error":
      return onError(message.error);
    default:
      return undefined; // a payload added by a later minor version: ignore it
  }
});

// Non-OK statuses arrive as an 'error' event and then as 'status'; decide on 'status' only.
call.on("error", () => {});
call.on("status", (status) => {
  call.end();
  client.close();
  if (status.code === grpc.status.OK) {
    log(`stream closed by the referee after ${matches} match(es)`);
    process.exit(0);
  }
  const name = grpc.status[status.code] ?? status.code;
  fail(1, `the stream ended with gRPC status ${name}: ${status.details}`);
});

const hello = { protocol_version: PROTOCOL_VERSION, bot_name: config.name };
if (config.token) hello.seat_token = config.token;
else hello.bot_key = config.botKey;
send({ hello });
log(`connecting to ${config.server} as ${config.name}`);
