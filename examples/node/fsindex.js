#!/usr/bin/env node
// A small fsindex client on the official gRPC packages for Node
// (@grpc/grpc-js, @grpc/proto-loader).
//
//   npm ci
//   node fsindex.js search 'invoice ext:pdf'   # search with a filter
//   node fsindex.js du ~/Documents             # disk usage of a folder
//   node fsindex.js watch ~/Documents          # print changes as they happen
//   node fsindex.js services                   # reflection (grpc.reflection.v1)
//   node fsindex.js health                     # grpc.health.v1, its .proto from reflection
//
// It reaches the daemon on its Unix socket with the plain `unix:PATH` target
// (default: the instance's socket, as fsctl finds it), or over loopback TCP
// with `--target 127.0.0.1:7700 --token-file PATH` (or FSINDEX_TOKEN).
// Results are JSON lines with fsctl's `--json` field names. The .proto is
// loaded at run time from the repository's proto/ (nothing is generated).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The protocol this program speaks: Status.protocol of a daemon it can use.
const PROTOCOL = 1;

const LOADER = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

function usageExit(msg) {
  process.stderr.write(
    `${msg ? `fsindex: ${msg}\n` : ''}usage: node fsindex.js [--target T] [--token-file F] [--proto DIR] ` +
      'search QUERY... [--limit N] | du PATH [--top N] | watch PATH [--count N] | services | health\n'
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { rest: [], limit: 0, top: 20, count: 0 };
  o.proto = process.env.FSINDEX_PROTO || path.join(__dirname, '..', '..', 'proto', 'proto');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usageExit(`${a} needs a value`));
    if (a === '--target') o.target = value();
    else if (a === '--token-file') o.tokenFile = value();
    else if (a === '--proto') o.proto = value();
    else if (a === '--limit') o.limit = Number(value());
    else if (a === '--top') o.top = Number(value());
    else if (a === '--count') o.count = Number(value());
    else o.rest.push(a);
  }
  o.command = o.rest.shift();
  o.target = o.target || defaultTarget();
  return o;
}

// The instance's socket, as fsctl finds it.
function defaultTarget() {
  const home = process.env.FSINDEX_HOME;
  if (home) return 'unix:' + path.join(home, 'fsindexd.sock');
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime) return 'unix:' + path.join(runtime, 'fsindex', 'fsindexd.sock');
  const data = process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return 'unix:' + path.join(data, 'fsindex', 'fsindexd.sock');
}

// Bearer token for a TCP daemon: --token-file, else FSINDEX_TOKEN (the token
// itself, or the path of a file holding it).
function metadata(o) {
  let token = '';
  if (o.tokenFile) token = fs.readFileSync(o.tokenFile, 'utf8');
  else {
    const t = process.env.FSINDEX_TOKEN || '';
    token = path.isAbsolute(t) && fs.existsSync(t) ? fs.readFileSync(t, 'utf8') : t;
  }
  const md = new grpc.Metadata();
  if (token.trim()) md.set('authorization', `Bearer ${token.trim()}`);
  return md;
}

// Display form of a byte-exact path, as fsctl's (lossy UTF-8).
const text = (b) => Buffer.from(b).toString('utf8');
const typeName = (t) => (t || '').replace(/^ENTRY_TYPE_/, '').toLowerCase() || 'unknown';

// RFC 3339 in UTC with the nanoseconds fsctl prints.
function rfc3339(ns) {
  const n = BigInt(ns);
  const secs = n / 1000000000n;
  const nanos = n % 1000000000n;
  const base = new Date(Number(secs) * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  const frac = nanos ? '.' + nanos.toString().padStart(9, '0').replace(/0+$/, '') : '';
  return `${base}${frac}Z`;
}

function usage(u) {
  return {
    path: text(u.path),
    type: typeName(u.type),
    bytes: Number(u.bytes),
    apparent_bytes: Number(u.apparent_bytes),
    files: Number(u.files),
    dirs: Number(u.dirs),
    incomplete: u.incomplete,
  };
}

const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');

function fail(err) {
  const code = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code) || err.code;
  process.stderr.write(`fsindex: ${code}: ${err.details || err.message}\n`);
  process.exit(2);
}

// A server reflection client (grpc.reflection.v1), from the .proto that
// @grpc/reflection ships.
function reflection(o) {
  const file = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')),
    'build', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto');
  const def = grpc.loadPackageDefinition(protoLoader.loadSync(file, LOADER));
  return new def.grpc.reflection.v1.ServerReflection(o.target, grpc.credentials.createInsecure());
}

// One reflection request, one answer.
function reflect(o, md, request, then) {
  const call = reflection(o).ServerReflectionInfo(md);
  call.on('data', (r) => {
    call.end();
    if (r.error_response) fail({ code: r.error_response.error_code, details: r.error_response.error_message });
    then(r);
  });
  call.on('error', fail);
  call.write(request);
}

// The services server reflection lists.
function services(o, md) {
  reflect(o, md, { list_services: '' }, (r) => {
    for (const s of r.list_services_response.service) console.log(s.name);
  });
}

// grpc.health.v1 Check with no .proto at all: the descriptors come from
// server reflection, which is how any service can be called without stubs.
function health(o, md) {
  reflect(o, md, { file_containing_symbol: 'grpc.health.v1.Health' }, (r) => {
    // A FileDescriptorSet is `repeated FileDescriptorProto file = 1`.
    const set = Buffer.concat(
      r.file_descriptor_response.file_descriptor_proto.map((fd) => {
        const len = [];
        for (let n = fd.length; ; n >>>= 7) {
          if (n < 0x80) { len.push(n); break; }
          len.push((n & 0x7f) | 0x80);
        }
        return Buffer.concat([Buffer.from([0x0a, ...len]), fd]);
      })
    );
    const def = grpc.loadPackageDefinition(protoLoader.loadFileDescriptorSetFromBuffer(set, LOADER));
    const client = new def.grpc.health.v1.Health(o.target, grpc.credentials.createInsecure());
    client.Check({ service: 'fsindex.v1.Index' }, md, (err, res) => {
      if (err) return fail(err);
      console.log(res.status);
      client.close();
    });
  });
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const md = metadata(o);
  if (o.command === 'services') return services(o, md);
  if (o.command === 'health') return health(o, md);
  if (!['search', 'du', 'watch'].includes(o.command)) usageExit(o.command ? `unknown command ${o.command}` : '');

  const def = grpc.loadPackageDefinition(
    protoLoader.loadSync('fsindex/v1/fsindex.proto', { ...LOADER, includeDirs: [o.proto] })
  );
  const index = new def.fsindex.v1.Index(o.target, grpc.credentials.createInsecure());

  // The version handshake: refuse a daemon of another protocol.
  index.Status({}, md, (err, st) => {
    if (err) return fail(err);
    const protocol = st.protocol === 'PROTOCOL_V1' ? 1 : Number(String(st.protocol).replace(/\D/g, '')) || 0;
    if (protocol !== PROTOCOL) {
      process.stderr.write(
        `fsindex: fsindexd ${st.version} (pid ${st.pid}) speaks protocol ${protocol}, this program speaks ${PROTOCOL}\n`
      );
      process.exit(2);
    }
    if (o.command === 'search') {
      if (!o.rest.length) usageExit('search needs a query');
      const call = index.Search({ query: o.rest.join(' '), limit: o.limit }, md);
      call.on('data', (chunk) => {
        for (const e of chunk.entries) {
          emit({ path: text(e.path), name: text(e.name), type: typeName(e.type), size: Number(e.size), mtime: rfc3339(e.mtime_ns) });
        }
      });
      call.on('error', fail);
      call.on('end', () => index.close());
    } else if (o.command === 'du') {
      if (!o.rest[0]) usageExit('du needs a path');
      const req = { path: Buffer.from(path.resolve(o.rest[0])), top: o.top };
      index.DiskUsage(req, md, (err, r) => {
        if (err) return fail(err);
        emit({ ...usage(r.total), children: r.children.map(usage) });
        index.close();
      });
    } else {
      if (!o.rest[0]) usageExit('watch needs a path');
      const call = index.Subscribe({ path: Buffer.from(path.resolve(o.rest[0])) }, md);
      let seen = 0;
      call.on('data', (e) => {
        const kind = e.kind.replace(/^CHANGE_KIND_/, '').toLowerCase();
        if (kind === 'subscribed') return process.stderr.write('watching\n');
        const ev = { kind };
        if (kind === 'missed') ev.missed = Number(e.missed);
        else {
          ev.path = text(e.path);
          ev.type = typeName(e.type);
          if (e.from_path.length) ev.from = text(e.from_path);
        }
        emit(ev);
        if (o.count && ++seen >= o.count) {
          call.cancel();
          process.exit(0);
        }
      });
      call.on('error', (err) => (err.code === grpc.status.CANCELLED ? undefined : fail(err)));
    }
  });
}

main();
