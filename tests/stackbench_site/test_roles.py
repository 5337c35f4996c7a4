import pytest
from django.contrib.auth.models import Group, Permission, User

from stackbench_site.roles import MAINTAINER_PERMISSIONS, ROLES, TRIAGER_PERMISSIONS, assign_role, ensure_roles

pytestmark = pytest.mark.django_db


def codenames(group_name):
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name=group_name).permissions.select_related("content_type")
    }


def test_every_role_exists_after_migrate_with_its_permissions_and_each_role_adds_to_the_one_below():
    assert codenames("viewers") == set()
    assert codenames("triagers") == set(TRIAGER_PERMISSIONS)
    assert codenames("maintainers") == set(MAINTAINER_PERMISSIONS)
    assert set(TRIAGER_PERMISSIONS) < set(MAINTAINER_PERMISSIONS)


def test_keeping_the_roles_in_step_restores_what_was_taken_and_removes_what_was_added():
    triagers = Group.objects.get(name="triagers")
    triagers.permissions.set([Permission.objects.get(codename="start_run")])
    ensure_roles()
    assert codenames("triagers") == set(TRIAGER_PERMISSIONS)
    assert Group.objects.filter(name__in=ROLES).count() == 3


def test_a_person_has_one_role_at_a_time_and_its_permissions():
    user = User.objects.create_user("dana")
    user.groups.add(Group.objects.create(name="docs team"))
    assign_role(user, "maintainer")
    assert User.objects.get(pk=user.pk).has_perm("audits.start_run")
    assign_role(user, "triager")
    user = User.objects.get(pk=user.pk)
    assert sorted(user.groups.values_list("name", flat=True)) == ["docs team", "triagers"]
    assert user.has_perm("audits.triage_problem") and not user.has_perm("audits.start_run")


def test_an_unknown_role_is_refused_naming_the_roles_there_are():
    user = User.objects.create_user("erin")
    with pytest.raises(ValueError, match="unknown role 'admin'; use one of: viewer, triager, maintainer"):
        assign_role(user, "admin")
    assert not user.groups.exists()
