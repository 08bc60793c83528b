import { addMember, changeMemberRole, removeMember } from '../../src/commands/manage-members';
import { setReviewLevel } from '../../src/commands/set-review-level';
import { ctxOf, deciderSpec } from './spec';

const created = { type: 'WorkspaceCreated', data: { workspaceId: 'w1', name: 'Widgets', defaultLevel: 'balanced' } };
const member = (principal: string, role: string) => ({ type: 'MemberAdded', data: { principal, role } });

describe('setReviewLevel, given / when / then without a store', () => {
  const spec = deciderSpec(setReviewLevel);
  it('a new level is recorded', () => {
    spec.given([created]).when({ level: 'thorough' }, ctxOf('user:ann', 'admin')).then([{ type: 'ReviewLevelSet', data: { level: 'thorough' } }]);
  });
  it('the level already in force records nothing', () => {
    spec.given([created, { type: 'ReviewLevelSet', data: { level: 'light' } }]).when({ level: 'light' }, ctxOf('user:ann', 'admin')).thenNothing();
  });
  it('no workspace, no level', () => {
    spec.given([]).when({ level: 'light' }, ctxOf('user:ann', 'admin')).thenRefused('unknown_workspace');
  });
});

describe('workspace members, given / when / then without a store', () => {
  it('the last owner cannot be demoted', () => {
    deciderSpec(changeMemberRole).given([created, member('user:ann', 'owner')]).when({ principal: 'user:ann', role: 'admin' }, ctxOf('user:ann', 'owner')).thenRefused('last_owner');
  });
  it('with a second owner, an owner may be demoted', () => {
    deciderSpec(changeMemberRole)
      .given([created, member('user:ann', 'owner'), member('user:bob', 'owner')])
      .when({ principal: 'user:ann', role: 'admin' }, ctxOf('user:bob', 'owner'))
      .then([{ type: 'MemberRoleChanged', data: { principal: 'user:ann', from: 'owner', to: 'admin' } }]);
  });
  it('the last owner cannot be removed', () => {
    deciderSpec(removeMember).given([created, member('user:ann', 'owner')]).when({ principal: 'user:ann' }, ctxOf('user:ann', 'owner')).thenRefused('last_owner');
  });
  it('removing a non-member records nothing', () => {
    deciderSpec(removeMember).given([created, member('user:ann', 'owner')]).when({ principal: 'user:zed' }, ctxOf('user:ann', 'owner')).thenNothing();
  });
  it('an agent never becomes admin', () => {
    deciderSpec(addMember).given([created, member('user:ann', 'owner')]).when({ principal: 'agent:bot', role: 'admin' }, ctxOf('user:ann', 'owner')).thenRefused('forbidden');
  });
  it('a member already on the roster is refused', () => {
    deciderSpec(addMember).given([created, member('user:ann', 'owner'), member('user:bob', 'member')]).when({ principal: 'user:bob', role: 'viewer' }, ctxOf('user:ann', 'owner')).thenRefused('member_exists');
  });
});
