
5

image/class/label


image/format

png