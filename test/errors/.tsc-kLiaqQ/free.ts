import { DomainError } from '../../../src/domain-error';
export const e = new DomainError('review_not_computed', 'a synonym the registry collapsed');
