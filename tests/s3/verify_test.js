'use strict';
// The loopback S3 server really verifies SigV4 (label s3): a request signed by AWS's own signer
// passes; the same request with a signed header tampered, a wrong secret, a body that does not
// match x-amz-content-sha256, a stale date, or an unknown key fails with S3's error codes.
// Usage: node --openssl-legacy-provider verify_test.js   (starts and stops its own server)

const assert = require('assert');
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { SignatureV4 } = require('@smithy/signature-v4');
const { Hash } = require('@smithy/hash-node');
const { HttpRequest } = require('@smithy/protocol-http');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stoker-s3-verify-'));
const server = spawn(process.execPath, [
  '--openssl-legacy-provider', path.join(__dirname, 's3_test_server.js'), '--dir', path.join(dir, 'o'),
  '--port-file', path.join(dir, 'port'), '--key', 'AKIAVERIFY:right-secret', '--bucket', 'data',
], { stdio: 'ignore' });

async function port() {
  for (let i = 0; i < 200; ++i) {
    try { return Number(fs.readFileSync(path.join(dir, 'port'), 'utf8')); } catch (e) {}
    await new Promise(r => setTimeout(r, 50));
  }
  throw new Error('the server did not start');
}

async function sign(p, { secret = 'right-secret', body = '', date = new Date() } = {}) {
  const signer = new SignatureV4({
    credentials: { accessKeyId: 'AKIAVERIFY', secretAccessKey: secret }, region: 'us-east-1',
    service: 's3', sha256: Hash.bind(null, 'sha256'), uriEscapePath: false, applyChecksum: false,
  });
  const request = new HttpRequest({
    method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: p, path: '/data/k',
    headers: {
      host: `127.0.0.1:${p}`, 'x-amz-meta-owner': 'stoker',
      'x-amz-content-sha256': crypto.createHash('sha256').update(body).digest('hex'),
    },
    body,
  });
  return signer.sign(request, { signingDate: date });
}

function send(p, signed, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: p, method: signed.method, path: signed.path,
                               headers: signed.headers }, res => {
      let text = '';
      res.on('data', c => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, code: (/<Code>(\w+)</.exec(text) || [])[1] }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main() {
  const p = await port();
  const ok = await send(p, await sign(p, { body: 'payload' }), 'payload');
  assert.strictEqual(ok.status, 200, 'a correctly signed PUT');

  const tampered = await sign(p, { body: 'payload' });
  tampered.headers['x-amz-meta-owner'] = 'mallory';
  assert.deepStrictEqual(await send(p, tampered, 'payload'), { status: 403, code: 'SignatureDoesNotMatch' });

  const wrong = await sign(p, { body: 'payload', secret: 'wrong-secret' });
  assert.deepStrictEqual(await send(p, wrong, 'payload'), { status: 403, code: 'SignatureDoesNotMatch' });

  const swapped = await sign(p, { body: 'payload' });
  assert.deepStrictEqual(await send(p, swapped, 'other body'), { status: 400, code: 'XAmzContentSHA256Mismatch' });

  const stale = await sign(p, { body: 'payload', date: new Date(Date.now() - 3600 * 1000) });
  assert.deepStrictEqual(await send(p, stale, 'payload'), { status: 403, code: 'RequestTimeTooSkewed' });

  const unknown = await sign(p, { body: 'payload' });
  unknown.headers.authorization = unknown.headers.authorization.replace('AKIAVERIFY', 'AKIANOBODY');
  assert.deepStrictEqual(await send(p, unknown, 'payload'), { status: 403, code: 'InvalidAccessKeyId' });
  console.log('6 passed, 0 failed');
}

main().then(() => 0, e => { console.error(e); return 1; }).then(rc => {
  server.kill('SIGTERM');
  server.on('exit', () => {
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(rc);
  });
});
