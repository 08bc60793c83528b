import { FactsCache } from '../../src/codegraph/facts-cache';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { CodeGraph } from '../../src/codegraph/graph';
import { blastRadius } from '../../src/codegraph/impact';
import { indexCommit } from '../../src/codegraph/indexer';
import { gitRepoSuite } from '../support/git-repo-suite';

jest.setTimeout(60_000);

/**
 * Issue 40: on expressjs/express (CommonJS) blast radius showed 0 dependents for lib/request.js,
 * lib/response.js and lib/application.js although lib/express.js requires all three: `require()` and
 * `module.exports` were not followed. This fixture has express's shape (written here, not copied).
 */
describe('CommonJS modules: require() and module.exports are edges', () => {
  const suite = gitRepoSuite('rl-cjs-', (f) => {
    f.write('package.json', '{ "name": "expressish", "main": "index.js" }\n');
    f.write('index.js', "'use strict';\n\nmodule.exports = require('./lib/express');\n");
    f.write(
      'lib/express.js',
      [
        "'use strict';",
        "var EventEmitter = require('node:events').EventEmitter;",
        "var mixin = require('merge-descriptors');",
        "var proto = require('./application');",
        "var req = require('./request');",
        "var res = require('./response');",
        "const { compileTrust } = require('./utils');",
        '',
        'exports = module.exports = createApplication;',
        '',
        'function createApplication() {',
        '  var app = function (rq, rs, next) { app.handle(rq, rs, next); };',
        '  mixin(app, EventEmitter.prototype, false);',
        '  mixin(app, proto, false);',
        '  app.request = Object.create(req, { app: { value: app } });',
        '  app.response = Object.create(res, { app: { value: app } });',
        "  app.set('trust proxy fn', compileTrust(0));",
        '  app.init();',
        '  return app;',
        '}',
        '',
        'exports.application = proto;',
        'exports.request = req;',
        'exports.response = res;',
        '',
      ].join('\n'),
    );
    f.write('lib/application.js', "'use strict';\nvar app = exports = module.exports = {};\n\napp.init = function init() {\n  this.cache = {};\n};\n\napp.handle = function handle(req, res, next) {\n  next();\n};\n");
    f.write('lib/request.js', "'use strict';\nvar http = require('node:http');\nvar req = Object.create(http.IncomingMessage.prototype);\n\nmodule.exports = req;\n\nreq.get = function header(name) {\n  return this.headers[name.toLowerCase()];\n};\n");
    f.write('lib/response.js', "'use strict';\nvar send = require('send');\nvar res = Object.create(require('node:http').ServerResponse.prototype);\n\nmodule.exports = res;\n\nres.status = function status(code) {\n  this.statusCode = code;\n  return this;\n};\n\nres.send = function send(body) {\n  return this.end(body);\n};\n");
    f.write('lib/utils.js', "'use strict';\n\nexports.compileTrust = function compileTrust(val) {\n  return function trust() { return val; };\n};\n\nfunction helper() {\n  return 1;\n}\nmodule.exports.helper = helper;\n");
    f.write('lib/router/index.js', "'use strict';\n\nmodule.exports = function Router() {\n  return {};\n};\n");
    f.write('lib/router/route.js', "'use strict';\nconst Router = require('.');\nconst { helper } = require('../utils');\n\nmodule.exports = function route() {\n  return [Router(), helper()];\n};\n");
    f.write('test/app.js', "'use strict';\nvar express = require('../');\nvar request = require('../lib/request');\n\ndescribe('app', function () {\n  it('works', function () {\n    express();\n    request.get('host');\n  });\n});\n");
    return [f.commit('expressish')];
  });

  let g: CodeGraph;
  beforeAll(async () => {
    const cache = FactsCache.open(suite.cacheDir);
    g = new CodeGraph(await indexCommit(suite.repo, suite.commits[0], { cache }));
    cache.close();
  });
  afterAll(() => closeSharedExtractPool());

  const dependentsOf = (path: string) => blastRadius(g, { path }, 3).dependents.files;

  it('lib/request.js, lib/response.js and lib/application.js have lib/express.js (and what reaches it) as dependents', () => {
    for (const file of ['lib/request.js', 'lib/response.js', 'lib/application.js']) expect(dependentsOf(file)).toContain('lib/express.js');
    expect(dependentsOf('lib/request.js')).toEqual(['lib/express.js', 'test/app.js']);
  });

  it('destructured requires and exports.x / module.exports.x resolve to the definitions', () => {
    expect(g.outgoingOf('lib/express.js#createApplication').map((e) => e.to)).toContain('lib/utils.js#compileTrust');
    expect(dependentsOf('lib/utils.js')).toEqual(expect.arrayContaining(['lib/express.js', 'lib/router/route.js']));
  });

  it("require('.') and require('../') load a directory's index.js, as Node resolves them", () => {
    expect(dependentsOf('lib/router/index.js')).toContain('lib/router/route.js');
    // test/app.js requires '../' (index.js, which is lib/express.js): `express()` is createApplication.
    expect(g.edges.filter((e) => e.fromFile === 'test/app.js').map((e) => e.to)).toEqual(expect.arrayContaining(['lib/express.js#createApplication', 'lib/request.js#get']));
  });

  it("a required name defines nothing: `var send = require('send')` and `res.send = function send` are not one symbol", () => {
    // Issue 38 saw the fragment label `lib/response.js#send (L31-220) — modified constant` on express.
    const send = g.symbols.get('lib/response.js#send')!;
    expect([send.def.kind, send.def.start, send.def.end]).toEqual(['function', 12, 14]);
  });

  it('packages (node:http, merge-descriptors) stay external: no edge into the repo', () => {
    const targets = g.edges.filter((e) => e.fromFile === 'lib/express.js').map((e) => e.toFile);
    expect(targets.every((t) => t.startsWith('lib/'))).toBe(true);
  });
});
