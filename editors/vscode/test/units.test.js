// The extension's plain functions (compiled to out/), with node's own test runner:
//   npm run compile && node --test test/
// (tests/vscode/test_units.py runs them in the suite).
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { statusText, statusTooltip } = require('../out/stats');
const { locateCapture } = require('../out/locate');
const { agentsIn } = require('../out/agents');

test('status text: kept rate, proposals, tests', () => {
  assert.strictEqual(
    statusText({ proposals: 3, keptRate: 1 / 3, testRuns: { total: 1 } }),
    'capture: 33% kept · 3 proposals · 1 test',
  );
  assert.strictEqual(statusText({ proposals: 1, keptRate: null, testRuns: { total: 0 } }), 'capture: –% kept · 1 proposal · 0 tests');
  assert.strictEqual(statusText({ proposals: 0, testRuns: { total: 0 } }), 'capture: no proposals today');
});

test('status tooltip lists the outcomes seen and the report line', () => {
  const tip = statusTooltip({ date: '2026-12-02', outcomes: { kept: 1, edited: 0, undone: 2 }, testRuns: { total: 2, passed: 1, failed: 1 }, line: 'today: 3 proposals' });
  assert.match(tip, /1 kept, 2 undone/);
  assert.doesNotMatch(tip, /edited/);
  assert.match(tip, /test runs: 2 \(1 passed, 1 failed\)/);
  assert.match(tip, /today: 3 proposals/);
});

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'capture-locate-'));
}

function exe(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\n');
  fs.chmodSync(file, 0o755);
  return file;
}

test('locate: the setting first, and a missing configured path is not replaced', () => {
  const dir = tmpdir();
  const configured = exe(path.join(dir, 'opt', 'capture'));
  const venv = exe(path.join(dir, 'ws', '.venv', 'bin', 'capture'));
  assert.deepStrictEqual(locateCapture(configured, [path.join(dir, 'ws')], ''), { command: configured, from: 'setting' });
  assert.strictEqual(locateCapture(path.join(dir, 'nope'), [path.join(dir, 'ws')], path.dirname(venv)), undefined);
});

test('locate: the workspace venv before PATH, PATH last, a non-executable file skipped', () => {
  const dir = tmpdir();
  const venv = exe(path.join(dir, 'ws', 'venv', 'bin', 'capture'));
  const onPath = exe(path.join(dir, 'bin', 'capture'));
  const notExe = path.join(dir, 'other', 'capture');
  fs.mkdirSync(path.dirname(notExe));
  fs.writeFileSync(notExe, '');
  const PATH = [path.dirname(notExe), path.dirname(onPath)].join(path.delimiter);
  assert.deepStrictEqual(locateCapture('', [path.join(dir, 'ws')], PATH), { command: venv, from: 'workspace venv' });
  assert.deepStrictEqual(locateCapture('', [path.join(dir, 'empty')], PATH), { command: onPath, from: 'PATH' });
  assert.strictEqual(locateCapture('', [], path.dirname(notExe)), undefined);
});

test('agents found by their marks in the workspace', () => {
  const dir = tmpdir();
  fs.mkdirSync(path.join(dir, '.claude'));
  fs.writeFileSync(path.join(dir, 'AGENTS.md'), '');
  assert.deepStrictEqual(agentsIn(dir), ['claude-code', 'codex']);
  assert.deepStrictEqual(agentsIn(tmpdir()), []);
});

test('the report page gets a policy that forbids scripts and fetches', () => {
  const { webviewHtml } = require('../out/webview');
  const html = webviewHtml('<!doctype html><html><head><title>r</title></head><body>x</body></html>');
  assert.match(html, /<head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;"><title>/);
  assert.match(webviewHtml('<p>bare</p>'), /^<meta http-equiv="Content-Security-Policy"[^>]*><p>bare<\/p>$/);
});
