import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isHarnessError, locateZooKeeper, ZooKeeperServer } from '../../src/testing/index.js';
import { assertNoJvmLeftBehind } from './helpers/processes.js';

const SYSTEM_JARS = '/usr/share/java';
const PATH_ONLY = { PATH: process.env.PATH };
const debianOnly = existsSync(`${SYSTEM_JARS}/zookeeper.jar`) ? {} : { skip: 'needs the Debian/Ubuntu zookeeper package' };

describe('locateZooKeeper', { timeout: 60_000 }, () => {
  let scratch: string;

  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'zklock-locator-test-'));
  });
  after(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('finds the Debian/Ubuntu package, adding the slf4j binding and netty-codec', debianOnly, async () => {
    const found = await locateZooKeeper({}, { env: PATH_ONLY });
    assert.match(found.source, /Debian\/Ubuntu/);
    assert.deepEqual(found.classpath, [
      `${SYSTEM_JARS}/zookeeper.jar`,
      `${SYSTEM_JARS}/slf4j-simple.jar`,
      `${SYSTEM_JARS}/netty-codec.jar`,
    ]);
    assert.ok(found.java.majorVersion >= 11, `Java ${found.java.majorVersion}`);
  });

  it('rejects an explicit class path with missing entries', async () => {
    await assert.rejects(locateZooKeeper({ classpath: ['/nonexistent/zookeeper.jar'] }, { env: PATH_ONLY }), (error) => {
      assert.ok(isHarnessError(error, 'ZOOKEEPER_NOT_FOUND'), String(error));
      assert.equal(error.context.source, 'the classpath option');
      assert.match(error.message, /\/nonexistent\/zookeeper\.jar/);
      return true;
    });
  });

  it('rejects a zookeeperHome that is not a tarball, rather than falling back', async () => {
    await assert.rejects(locateZooKeeper({ zookeeperHome: scratch }, { env: PATH_ONLY }), (error) => {
      assert.ok(isHarnessError(error, 'ZOOKEEPER_NOT_FOUND'), String(error));
      assert.match(error.message, /lib\/zookeeper-<version>\.jar/);
      return true;
    });
  });

  it('prefers ZOOKEEPER_HOME over the system package, and reports it when broken', async () => {
    await assert.rejects(locateZooKeeper({}, { env: { ...PATH_ONLY, ZOOKEEPER_HOME: join(scratch, 'missing') } }), (error) => {
      assert.ok(isHarnessError(error, 'ZOOKEEPER_NOT_FOUND'), String(error));
      assert.equal(error.context.source, 'ZOOKEEPER_HOME');
      return true;
    });
  });

  it('takes ZOOKEEPER_CLASSPATH as given', debianOnly, async () => {
    const classpath = `${SYSTEM_JARS}/zookeeper.jar:${SYSTEM_JARS}/slf4j-nop.jar`;
    const found = await locateZooKeeper({}, { env: { ...PATH_ONLY, ZOOKEEPER_CLASSPATH: classpath } });
    assert.equal(found.source, 'ZOOKEEPER_CLASSPATH');
    assert.deepEqual(found.classpath, classpath.split(':'));
  });

  it('says what to install when nothing is found', async () => {
    const emptyJarDir = join(scratch, 'no-jars');
    mkdirSync(emptyJarDir);
    await assert.rejects(locateZooKeeper({}, { env: PATH_ONLY, systemJarDir: emptyJarDir }), (error) => {
      assert.ok(isHarnessError(error, 'ZOOKEEPER_NOT_FOUND'), String(error));
      assert.match(error.message, /apt-get install zookeeper/);
      assert.match(error.message, /ZOOKEEPER_HOME/);
      assert.match(error.message, /Java 11\+/);
      return true;
    });
  });

  it('reports a missing Java as JAVA_NOT_FOUND and an old one as JAVA_TOO_OLD', async () => {
    await assert.rejects(locateZooKeeper({ javaHome: join(scratch, 'no-jdk') }, { env: PATH_ONLY }), (error) =>
      isHarnessError(error, 'JAVA_NOT_FOUND'),
    );
    const oldJdk = join(scratch, 'old-jdk');
    mkdirSync(join(oldJdk, 'bin'), { recursive: true });
    writeFileSync(join(oldJdk, 'bin', 'java'), '#!/bin/sh\necho \'java version "1.8.0_352"\' >&2\n');
    chmodSync(join(oldJdk, 'bin', 'java'), 0o755);
    await assert.rejects(locateZooKeeper({}, { env: { ...PATH_ONLY, JAVA_HOME: oldJdk } }), (error) => {
      assert.ok(isHarnessError(error, 'JAVA_TOO_OLD'), String(error));
      assert.equal(error.context.required, 11);
      return true;
    });
  });

  it('finds and runs an Apache tarball layout (lib/*.jar, conf/)', debianOnly, async (t) => {
    // A fake tarball made of the Debian jars: zookeeper.jar's manifest names its dependencies by absolute path.
    const home = join(scratch, 'apache-zookeeper-3.8.0-bin');
    mkdirSync(join(home, 'lib'), { recursive: true });
    mkdirSync(join(home, 'conf'));
    symlinkSync(`${SYSTEM_JARS}/zookeeper.jar`, join(home, 'lib', 'zookeeper-3.8.0.jar'));
    symlinkSync(`${SYSTEM_JARS}/slf4j-simple.jar`, join(home, 'lib', 'slf4j-simple-1.7.32.jar'));
    const found = await locateZooKeeper({ zookeeperHome: home }, { env: PATH_ONLY });
    assert.deepEqual(found.classpath, [
      join(home, 'conf'),
      join(home, 'lib', 'slf4j-simple-1.7.32.jar'),
      join(home, 'lib', 'zookeeper-3.8.0.jar'),
    ]);
    const server = await ZooKeeperServer.start({ zookeeperHome: home });
    t.after(() => server.close());
    assert.equal(await server.fourLetterWord('ruok'), 'imok');
  });
});

it('leaves no JVM of this test process behind', async () => {
  await assertNoJvmLeftBehind();
});
