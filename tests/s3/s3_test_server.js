'use strict';
// Loopback S3 server for Stoker's `s3` tests and `scripts/bench.sh s3`.
//
// s3rver gives S3's semantics (buckets, objects, ranges, multipart uploads, ListObjectsV2) but
// accepts any signature. This proxy sits in front of it and checks every request with AWS's own
// SigV4 signer (@smithy/signature-v4) before forwarding it, so a wrong secret, a tampered signed
// header, a stale x-amz-date, a payload that does not match x-amz-content-sha256 or an expired
// session token fail as they do on S3. It also serves the credential endpoints Stoker's chain
// talks to, issuing temporary credentials that expire after --sts-ttl seconds:
//
//   POST /?Action=AssumeRoleWithWebIdentity   STS (form body or query), checks token and role
//   GET  /container-credentials               ECS/EKS container endpoint (checks Authorization)
//   PUT  /latest/api/token, GET /latest/meta-data/iam/security-credentials/[role]   IMDSv2
//   POST /__fail?count=N[&status=S][&retry_after=V]   the next N S3 requests answer S (503
//                          SlowDown by default; 429 TooManyRequests, 408 RequestTimeout), with a
//                          Retry-After: V header when given (retry tests)
//
// Flags: --dir DIR (objects; kept across restarts)  --port N (0: any)  --port-file FILE
//        --log FILE (one line per S3 request: "METHOD /bucket/key STATUS")  --key AKID:SECRET
//        (repeatable)  --bucket NAME (repeatable, created)  --sts-ttl SECONDS
//        --web-identity-token TOKEN  --role-arn ARN  --container-token TOKEN
// Binds 127.0.0.1 only. SIGTERM stops it.

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const S3rver = require('s3rver');
const { SignatureV4 } = require('@smithy/signature-v4');
const { Hash } = require('@smithy/hash-node');
const { HttpRequest } = require('@smithy/protocol-http');

function parseArgs(argv) {
  const args = { key: [], bucket: [], port: 0, 'sts-ttl': 900 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '');
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`flag --${name} needs a value`);
    if (Array.isArray(args[name])) args[name].push(value);
    else args[name] = value;
  }
  if (!args.dir) throw new Error('--dir is required');
  return args;
}

const args = parseArgs(process.argv.slice(2));
const staticKeys = new Map(args.key.map(k => [k.split(':')[0], k.split(':').slice(1).join(':')]));
const issued = new Map();  // access key id -> {secret, token, expires (ms)}
// Written synchronously, before the answer, so a client that got its answer finds its line.
let failNext = 0;  // S3 requests still to answer with `failAnswer`.
let failAnswer = { status: 503, retryAfter: undefined };
const failCodes = {
  408: ['RequestTimeout', 'Your socket connection to the server was not read from or written to.'],
  429: ['TooManyRequests', 'Please reduce your request rate.'],
  503: ['SlowDown', 'Please reduce your request rate.'],
};
const logFd = args.log ? fs.openSync(args.log, 'a') : null;

function xmlError(res, status, code, message, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/xml', ...headers });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
          `<Message>${message}</Message></Error>`);
}

function issueCredentials() {
  const id = 'ASIA' + crypto.randomBytes(8).toString('hex').toUpperCase();
  const creds = {
    secret: crypto.randomBytes(20).toString('base64'),
    token: 'tok-' + crypto.randomBytes(24).toString('hex'),
    expires: Date.now() + Number(args['sts-ttl']) * 1000,
  };
  issued.set(id, creds);
  return { id, ...creds, expiration: new Date(creds.expires).toISOString() };
}

function parseQuery(search) {
  const query = {};
  for (const part of search.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    query[name] = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
  }
  return query;
}

// Checks the SigV4 signature of `req` (body in `body`); returns null or [status, code, message].
async function verify(req, body) {
  const auth = req.headers.authorization || '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(auth);
  if (!m) return [403, 'AccessDenied', 'missing or malformed SigV4 Authorization header'];
  const [, keyId, , region, service, signedList, signature] = m;
  let secret = staticKeys.get(keyId);
  let sessionToken;
  if (secret === undefined && issued.has(keyId)) {
    const creds = issued.get(keyId);
    if (req.headers['x-amz-security-token'] !== creds.token) {
      return [403, 'InvalidToken', 'The provided token is malformed or otherwise invalid.'];
    }
    if (Date.now() >= creds.expires) {
      return [400, 'ExpiredToken', 'The provided token has expired.'];
    }
    secret = creds.secret;
    sessionToken = creds.token;
  }
  if (secret === undefined) {
    return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  }
  const amzDate = req.headers['x-amz-date'] || '';
  const dm = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!dm) return [403, 'AccessDenied', 'missing x-amz-date'];
  const signingDate = new Date(Date.UTC(dm[1], dm[2] - 1, dm[3], dm[4], dm[5], dm[6]));
  if (Math.abs(Date.now() - signingDate.getTime()) > 15 * 60 * 1000) {
    return [403, 'RequestTimeTooSkewed',
            'The difference between the request time and the current time is too large.'];
  }
  const contentSha = req.headers['x-amz-content-sha256'];
  if (!contentSha) return [400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256'];
  if (contentSha !== 'UNSIGNED-PAYLOAD' &&
      contentSha !== crypto.createHash('sha256').update(body).digest('hex')) {
    return [400, 'XAmzContentSHA256Mismatch',
            "The provided 'x-amz-content-sha256' header does not match what was computed."];
  }
  const signed = signedList.split(';');
  const headers = {};
  for (const name of signed) {
    if (req.headers[name] === undefined) return [403, 'AccessDenied', `signed header ${name} missing`];
    headers[name] = String(req.headers[name]);
  }
  const url = new URL(req.url, 'http://localhost');
  const rawPath = req.url.split('?')[0];
  const request = new HttpRequest({
    method: req.method, protocol: 'http:', hostname: headers.host || 'localhost',
    path: rawPath, query: parseQuery(url.search.slice(1)), headers,
  });
  const signer = new SignatureV4({
    credentials: { accessKeyId: keyId, secretAccessKey: secret, sessionToken },
    region, service, sha256: Hash.bind(null, 'sha256'), uriEscapePath: false, applyChecksum: false,
  });
  const expected = await signer.sign(request, {
    signingDate, signableHeaders: new Set(signed),
    unsignableHeaders: new Set(Object.keys(headers).filter(h => !signed.includes(h))),
  });
  const got = /Signature=([0-9a-f]+)/.exec(expected.headers.authorization)[1];
  if (got !== signature) {
    return [403, 'SignatureDoesNotMatch',
            'The request signature we calculated does not match the signature you provided.'];
  }
  return null;
}

function credentialJson(creds) {
  return JSON.stringify({
    Code: 'Success', Type: 'AWS-HMAC', AccessKeyId: creds.id, SecretAccessKey: creds.secret,
    Token: creds.token, Expiration: creds.expiration, LastUpdated: new Date().toISOString(),
  });
}

// STS, container and instance metadata endpoints; true when `req` was one of them.
function serveCredentials(req, res, body) {
  const url = new URL(req.url, 'http://localhost');
  const form = parseQuery(req.method === 'POST' ? body.toString() : url.search.slice(1));
  if (form.Action === 'AssumeRoleWithWebIdentity') {
    if (!args['web-identity-token'] || form.WebIdentityToken !== args['web-identity-token'] ||
        form.RoleArn !== args['role-arn']) {
      xmlError(res, 403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
      return true;
    }
    const c = issueCredentials();
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(`<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>` +
            `<AccessKeyId>${c.id}</AccessKeyId><SecretAccessKey>${c.secret}</SecretAccessKey>` +
            `<SessionToken>${c.token}</SessionToken><Expiration>${c.expiration}</Expiration>` +
            `</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`);
    return true;
  }
  if (url.pathname === '/container-credentials') {
    if ((req.headers.authorization || '') !== (args['container-token'] || '')) {
      res.writeHead(401);
      res.end('unauthorized');
      return true;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(credentialJson(issueCredentials()));
    return true;
  }
  if (url.pathname === '/latest/api/token' && req.method === 'PUT') {
    res.writeHead(200);
    res.end('imds-session-token');
    return true;
  }
  const prefix = '/latest/meta-data/iam/security-credentials/';
  if (url.pathname.startsWith(prefix)) {
    if (req.headers['x-aws-ec2-metadata-token'] !== 'imds-session-token') {
      res.writeHead(401);
      res.end();
      return true;
    }
    const role = url.pathname.slice(prefix.length);
    res.writeHead(200);
    res.end(role === '' ? 'stoker-test-role' : credentialJson(issueCredentials()));
    return true;
  }
  return false;
}

async function main() {
  fs.mkdirSync(args.dir, { recursive: true });
  const backend = new S3rver({
    address: '127.0.0.1', port: 0, silent: !process.env.S3_TEST_SERVER_VERBOSE, serviceEndpoint: 'localhost', directory: args.dir,
    configureBuckets: args.bucket.map(name => ({ name })),
  });
  const { port: backendPort } = await backend.run();

  const proxy = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', c => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const log = status => {
        if (logFd !== null) fs.writeSync(logFd, `${req.method} ${req.url.split('?')[0]} ${status}\n`);
      };
      if (serveCredentials(req, res, body)) {
        log(res.statusCode);
        return;
      }
      if (req.method === 'POST' && req.url.startsWith('/__fail?')) {
        const query = parseQuery(req.url.split('?')[1]);
        const status = Number(query.status || 503);
        if (!failCodes[status]) {
          xmlError(res, 400, 'InvalidArgument',
                   `__fail: status must be one of ${Object.keys(failCodes)}`);
          return;
        }
        failNext = Number(query.count || 0);
        failAnswer = { status, retryAfter: query.retry_after };
        res.writeHead(204);
        res.end();
        return;
      }
      let failure;
      try {
        failure = await verify(req, body);
        if (!failure && failNext > 0) {
          failNext -= 1;
          const retryAfter = failAnswer.retryAfter;
          failure = [failAnswer.status, ...failCodes[failAnswer.status],
                     retryAfter === undefined ? {} : { 'retry-after': retryAfter }];
        }
      } catch (e) {
        failure = [500, 'InternalError', String(e)];
      }
      if (failure) {
        log(failure[0]);
        xmlError(res, ...failure);
        return;
      }
      const headers = { ...req.headers };
      delete headers.authorization;  // s3rver would try (and fail) to check it itself.
      delete headers['x-amz-security-token'];
      const forward = http.request({
        host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers,
      }, backendRes => {
        log(backendRes.statusCode);
        res.writeHead(backendRes.statusCode, backendRes.headers);
        backendRes.pipe(res);
      });
      forward.on('error', e => xmlError(res, 502, 'InternalError', String(e)));
      forward.end(body);
    });
  });
  proxy.keepAliveTimeout = 60000;
  proxy.listen(Number(args.port), '127.0.0.1', () => {
    const port = proxy.address().port;
    if (args['port-file']) {
      fs.writeFileSync(args['port-file'] + '.tmp', `${port}\n`);
      fs.renameSync(args['port-file'] + '.tmp', args['port-file']);
    }
    process.stdout.write(`listening on 127.0.0.1:${port}\n`);
  });
  const stop = async () => {
    proxy.close();
    await backend.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch(e => {
  process.stderr.write(`s3_test_server: ${e.stack || e}\n`);
  process.exit(1);
});
