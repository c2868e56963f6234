import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validatePath } from '../../src/client/index.js';

function rejects(path: unknown, sequential = false): string {
  try {
    validatePath(path, 'test', sequential);
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'INVALID_PATH', JSON.stringify(path));
    return (error as Error).message;
  }
  assert.fail(`${JSON.stringify(path)} was accepted`);
}

describe('path validation', () => {
  it('accepts what the server accepts', () => {
    for (const path of ['/', '/a', '/a/b', '/a.b/...', '/.x', '/x.', '/a b', '/\u00e9t\u00e9', '/\u007e\u00a0']) {
      assert.equal(validatePath(path, 'test'), path);
    }
    assert.equal(validatePath('/locks/lock-', 'test', true), '/locks/lock-');
    assert.equal(validatePath('/locks/', 'test', true), '/locks/');
  });

  it('refuses the rest, saying why', () => {
    assert.match(rejects(42), /not a string/);
    assert.match(rejects(''), /empty/);
    assert.match(rejects('relative'), /must start with \//);
    assert.match(rejects('/trailing/'), /must not end with \//);
    assert.match(rejects('/a//b'), /empty segment/);
    assert.match(rejects('//'), /empty segment|must not end/);
    assert.match(rejects('/a//', true), /empty segment/);
    assert.match(rejects('//', true), /empty segment/);
    assert.match(rejects('/a/./b'), /relative segment "\."/);
    assert.match(rejects('/a/..'), /relative segment "\.\."/);
    assert.match(rejects('/../', true), /relative segment "\.\."/);
    assert.match(rejects('/nul\u0000'), /U\+0000 at 4/);
    assert.match(rejects('/ctl\u001f'), /U\+001f/);
    assert.match(rejects('/del\u007f'), /U\+007f/);
    assert.match(rejects('/c1\u009f'), /U\+009f/);
    assert.match(rejects('/\u{1f512}'), /U\+d83d/);
    assert.match(rejects('/private\ue000'), /U\+e000/);
    assert.match(rejects('/special\ufff0'), /U\+fff0/);
  });
});
