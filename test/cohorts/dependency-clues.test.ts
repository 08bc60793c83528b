import { importsPackage } from '../../src/cohorts/dependency-clues';

describe('which import loads which dependency (a dependency change goes to the cohorts that import it)', () => {
  test.each([
    ['npm', 'lodash', 'lodash', true],
    ['npm', 'lodash', 'lodash/chunk', true],
    ['npm', 'lodash', 'lodash-es', false],
    ['npm', '@scope/pkg', '@scope/pkg/sub', true],
    ['npm', '@types/node', 'node', true],
    ['npm', '@types/babel__core', '@babel/core', true],
    ['npm', '@types/react', 'react-dom', false],
    ['npm', 'lodash', './lodash', false],
    ['python', 'protobuf', 'google.protobuf.message', true],
    ['python', 'protobuf', 'google', false],
    ['go', 'github.com/pkg/errors', 'github.com/pkg/errors', true],
    ['go', 'github.com/x/y', 'github.com/x/y/sub', true],
    ['go', 'github.com/x/y', 'github.com/x/yz', false],
    ['python', 'PyYAML', 'yaml', true],
    ['python', 'python-dateutil', 'dateutil.parser', true],
    ['python', 'Flask_SQLAlchemy', 'flask_sqlalchemy', true],
    ['python', 'requests-toolbelt', 'requests_toolbelt.multipart', true],
    ['python', 'requests', 'requests_toolbelt', false],
    ['cargo', 'serde-json', 'serde_json::Value', true],
    ['cargo', 'serde', 'serde_json', false],
    ['dart', 'http', 'package:http/http.dart', true],
    ['dart', 'http', 'package:http_parser/http_parser.dart', false],
    ['maven', 'x', 'x', false],
  ])('%s %s ← %s: %s', (ecosystem, name, spec, expected) => {
    expect(importsPackage(ecosystem, name, spec)).toBe(expected);
  });
});
