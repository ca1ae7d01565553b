// The peer for bench/run_e2e_bench.sh: @vlasky/zongji (Node) reading a
// MariaDB binlog from FILE:POSITION until it has seen N row changes, touching
// every value of every row (as canal-cli and e2e_client --touch-columns do),
// then printing one JSON object: rows, seconds and rows/s from its connect
// (the call that opens the connection, after Node and the module have
// loaded), and seconds_from_start from --t0-ms (the epoch ms the run
// started; default: this program's start).
//
//   node bench/zongji_reader.mjs --module DIR --port P --file F --rows N
//        [--host H] [--user U] [--password W] [--position POS] [--t0-ms T]
//
// DIR is the node_modules directory npm installed @vlasky/zongji into.
// Exit 1 (message on stderr) on a connection or decode error, or when the
// stream stays silent for 60 s before N rows.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = { host: '127.0.0.1', user: 'canal', password: 'canal', position: '4', t0ms: String(Date.now()) };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '').replace('t0-ms', 't0ms');
  if (process.argv[i + 1] === undefined) {
    console.error(`zongji_reader: ${process.argv[i]} needs a value`);
    process.exit(2);
  }
  args[key] = process.argv[i + 1];
}
for (const need of ['module', 'port', 'file', 'rows']) {
  if (!args[need]) {
    console.error(`zongji_reader: --${need} is required`);
    process.exit(2);
  }
}
const wanted = Number(args.rows);
const t0 = Number(args.t0ms);
let connectMs = 0;  // set just before zongji.start()
const entry = path.join(args.module, '@vlasky', 'zongji', 'index.js');
const { default: ZongJi } = await import(pathToFileURL(entry).href);

const zongji = new ZongJi({
  host: args.host,
  port: Number(args.port),
  user: args.user,
  password: args.password,
  dateStrings: true,
});
let rows = 0;
let valueBytes = 0;
let lastEvent = Date.now();
const fail = (what) => {
  console.error(`zongji_reader: ${what}`);
  process.exit(1);
};
// Reads a value the way a consumer would: its text length, so nothing is skipped.
const touch = (v) => {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'string') return v.length;
  if (Buffer.isBuffer(v)) return v.length;
  return String(v).length;
};
zongji.on('error', (e) => fail(String(e && e.message ? e.message : e)));
zongji.on('binlog', (evt) => {
  lastEvent = Date.now();
  if (!evt.rows) return;
  for (const row of evt.rows) {
    const image = row.after !== undefined ? row.after : row;
    for (const key in image) valueBytes += key.length + touch(image[key]);
    if (++rows === wanted) {
      const now = Date.now();
      const secs = (now - connectMs) / 1000;
      process.stdout.write(JSON.stringify({
        mode: 'zongji', rows, seconds: Number(secs.toFixed(3)), rows_per_s: Math.round(rows / secs),
        seconds_from_start: Number(((now - t0) / 1000).toFixed(3)), column_bytes: valueBytes,
      }) + '\n');
      process.exit(0);
    }
  }
});
setInterval(() => {
  if (Date.now() - lastEvent > 60000) fail(`no event for 60 s after ${rows} of ${wanted} rows`);
}, 1000).unref();
connectMs = Date.now();
zongji.start({
  serverId: 14599,
  filename: args.file,
  position: Number(args.position),
  includeEvents: ['tablemap', 'writerows', 'updaterows', 'deleterows'],
});
