"""The three roles of the dashboard, as Django groups: viewers read; triagers also triage and comment;
maintainers also start runs, manage libraries and create share links. Kept in step after every migrate."""

TRIAGER_PERMISSIONS = ["audits.triage_problem", "walkthroughs.add_feedback"]
MAINTAINER_PERMISSIONS = TRIAGER_PERMISSIONS + [
    "audits.start_run",
    "audits.share_run",
    "walkthroughs.manage_library",
    "walkthroughs.add_library",
    "walkthroughs.change_library",
    "walkthroughs.add_presentedwalkthrough",
    "walkthroughs.change_presentedwalkthrough",
]
ROLES = {"viewers": [], "triagers": TRIAGER_PERMISSIONS, "maintainers": MAINTAINER_PERMISSIONS}
ROLE_NAMES = {"viewer": "viewers", "triager": "triagers", "maintainer": "maintainers"}


def ensure_roles(**kwargs):
    from django.contrib.auth.models import Group, Permission

    for group_name, codenames in ROLES.items():
        group, _ = Group.objects.get_or_create(name=group_name)
        wanted = []
        for codename in codenames:
            app_label, name = codename.split(".")
            permission = Permission.objects.filter(content_type__app_label=app_label, codename=name).first()
            if permission:
                wanted.append(permission)
        group.permissions.set(wanted)


def assign_role(user, role: str):
    from django.contrib.auth.models import Group

    if role not in ROLE_NAMES:
        raise ValueError(f"unknown role {role!r}; use one of: {', '.join(ROLE_NAMES)}")
    user.groups.remove(*Group.objects.filter(name__in=ROLES))
    user.groups.add(Group.objects.get(name=ROLE_NAMES[role]))
